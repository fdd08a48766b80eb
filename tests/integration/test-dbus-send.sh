#!/bin/bash
# dbus-send (libdbus) against the bus: driver methods and errors
. "$(dirname "$0")/lib.sh"
ds() { dbus-send --session --print-reply "$@"; }
D="--dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus"

expect "GetId returns 32 hex digits" 'string "[0-9a-f]{32}"' ds $D.GetId
expect "ListNames contains the driver" 'string "org.freedesktop.DBus"' ds $D.ListNames
expect "ListNames contains a unique name" 'string ":1\.[0-9]+"' ds $D.ListNames
expect "NameHasOwner(org.freedesktop.DBus) is true" 'boolean true' ds $D.NameHasOwner string:org.freedesktop.DBus
expect "NameHasOwner of an unknown name is false" 'boolean false' ds $D.NameHasOwner string:com.example.Nobody
expect "GetNameOwner of an unknown name: NameHasNoOwner" 'org.freedesktop.DBus.Error.NameHasNoOwner' ds $D.GetNameOwner string:com.example.Nobody
expect "GetNameOwner(org.freedesktop.DBus)" 'string "org.freedesktop.DBus"' ds $D.GetNameOwner string:org.freedesktop.DBus
expect "call to a missing name: ServiceUnknown" 'org.freedesktop.DBus.Error.ServiceUnknown' ds --dest=com.example.Nobody / com.example.Foo.Bar
expect "unknown driver method: UnknownMethod" 'org.freedesktop.DBus.Error.UnknownMethod' ds $D.NoSuchMethod
expect "unknown driver interface: UnknownInterface" 'org.freedesktop.DBus.Error.UnknownInterface' ds --dest=org.freedesktop.DBus /org/freedesktop/DBus com.example.Nope.Method
expect "wrong driver args: InvalidArgs" 'org.freedesktop.DBus.Error.InvalidArgs' ds $D.NameHasOwner uint32:1
expect "GetConnectionUnixUser of the driver" "uint32 $(id -u)" ds $D.GetConnectionUnixUser string:org.freedesktop.DBus
expect "GetConnectionUnixProcessID of an unknown name" 'NameHasNoOwner' ds $D.GetConnectionUnixProcessID string:com.example.Nobody
expect "RequestName of an invalid name: InvalidArgs" 'InvalidArgs' ds $D.RequestName string:not-valid uint32:0
expect "RequestName of org.freedesktop.DBus is refused" 'InvalidArgs' ds $D.RequestName string:org.freedesktop.DBus uint32:0
expect "RequestName of a new name: primary owner (1)" 'uint32 1' ds $D.RequestName string:com.example.DbusSend uint32:0
expect "ReleaseName of a name nobody owns: non-existent (2)" 'uint32 2' ds $D.ReleaseName string:com.example.Nobody
expect "Peer.Ping on the driver" 'method return' ds --dest=org.freedesktop.DBus / org.freedesktop.DBus.Peer.Ping
expect "Peer.GetMachineId" 'string "[0-9a-f]{32}"' ds --dest=org.freedesktop.DBus / org.freedesktop.DBus.Peer.GetMachineId
expect "Features property has HeaderFiltering" 'HeaderFiltering' ds $D.Properties.Get string:org.freedesktop.DBus string:Features
expect "Interfaces property lists Monitoring and Debug.Stats" 'org.freedesktop.DBus.Monitoring.*org.freedesktop.DBus.Debug.Stats|org.freedesktop.DBus.Debug.Stats.*org.freedesktop.DBus.Monitoring' \
	bash -c "dbus-send --session --print-reply $D.Properties.Get string:org.freedesktop.DBus string:Interfaces | tr -d '\n'"
expect "Properties.Set is refused" 'PropertyReadOnly' ds $D.Properties.Set string:org.freedesktop.DBus string:Features variant:int32:1
expect "StartServiceByName of an unknown name: ServiceUnknown" 'ServiceUnknown' ds $D.StartServiceByName string:com.example.Nobody uint32:0
expect "ListActivatableNames has the driver" 'org.freedesktop.DBus' ds $D.ListActivatableNames
expect "Debug.Stats.GetStats" 'ActiveConnections' ds --dest=org.freedesktop.DBus /org/freedesktop/DBus org.freedesktop.DBus.Debug.Stats.GetStats
expect "AddMatch with an invalid rule: MatchRuleInvalid" 'MatchRuleInvalid' ds $D.AddMatch string:"type='nonsense'"
expect "RemoveMatch of an unknown rule: MatchRuleNotFound" 'MatchRuleNotFound' ds $D.RemoveMatch string:"type='signal'"
expect "GetAdtAuditSessionData: AdtAuditDataUnknown" 'AdtAuditDataUnknown' ds $D.GetAdtAuditSessionData string:org.freedesktop.DBus
expect "GetConnectionSELinuxSecurityContext: SELinuxSecurityContextUnknown" 'SELinuxSecurityContextUnknown' ds $D.GetConnectionSELinuxSecurityContext string:org.freedesktop.DBus
expect "GetConnectionCredentials of the driver" 'UnixUserID' ds $D.GetConnectionCredentials string:org.freedesktop.DBus
expect "UpdateActivationEnvironment at the canonical path" 'method return' ds $D.UpdateActivationEnvironment dict:string:string:FOO,bar
expect "UpdateActivationEnvironment elsewhere: AccessDenied" 'AccessDenied' ds --dest=org.freedesktop.DBus / org.freedesktop.DBus.UpdateActivationEnvironment dict:string:string:FOO,bar
expect "Introspect at / lists the driver's path" 'node name="org/freedesktop/DBus"' ds --dest=org.freedesktop.DBus / org.freedesktop.DBus.Introspectable.Introspect
expect "ReloadConfig" 'method return' ds $D.ReloadConfig
echo "1..$n"
