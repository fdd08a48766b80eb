#!/bin/bash
# integration: own buses (runs beside the other tests: tests/integration/run.sh)
# test-unroutable.sh's replies nobody asked for, under system.conf-like
# policies that allow or refuse them on either side
TEST_NAME=test-unrequested-replies.sh UNROUTABLE_SET=replies exec "$(dirname "$0")/test-unroutable.sh"
