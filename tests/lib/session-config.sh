# tests/lib/session-config.sh (sourced): the configuration the tests' own
# session buses run with.
#
# open_session_config FILE ADDRESS [ELEMENT...]: a session bus on ADDRESS
# (a listen address) with EXTERNAL authentication that lets everyone send
# anywhere, eavesdrop and own any name, and the ELEMENTs (XML lines:
# servicedirs, limits, includedirs) after its policy
open_session_config() {
	local file=$1 listen=$2 element
	shift 2
	{
		cat <<-CONF
		<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
		 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
		<busconfig>
		  <type>session</type>
		  <listen>$listen</listen>
		  <auth>EXTERNAL</auth>
		  <policy context="default">
		    <allow send_destination="*" eavesdrop="true"/>
		    <allow eavesdrop="true"/>
		    <allow own="*"/>
		  </policy>
		CONF
		for element in "$@"; do echo "  $element"; done
		echo "</busconfig>"
	} > "$file"
}
