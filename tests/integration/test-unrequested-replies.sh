#!/bin/bash
# test-unroutable.sh's replies nobody asked for, under system.conf-like
# policies that allow or refuse them on either side
UNROUTABLE_SET=replies exec "$(dirname "$0")/test-unroutable.sh"
