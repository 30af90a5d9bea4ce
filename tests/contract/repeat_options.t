# EVIDENCE-OF: repeated --kind / --status / --origin
# add up in list and candidates, as they do in recall
$ cairn init >/dev/null
$ cairn write --kind fact "a fact about ports" >/dev/null; cairn write --kind rule "a rule about ports" >/dev/null; cairn write --kind note "a note about ports" >/dev/null; cairn write --kind fact --status candidate "a candidate fact" >/dev/null
$ cairn list --kind fact --kind rule | awk '{print $2}' | sort | tr '\n' ' '
> fact rule 
$ cairn list --status candidate --status accepted | wc -l
> 4
$ cairn list --origin human --origin agent | wc -l
> 3
$ cairn write --origin agent --kind fact "agent fact" >/dev/null; cairn write --origin agent --kind rule "agent rule" >/dev/null; cairn write --origin agent --kind note "agent note" >/dev/null
$ cairn candidates --kind fact --kind rule | awk '{print $2}' | sort | tr '\n' ' '
> fact fact rule 
# EVIDENCE-OF: recall -k over 100 is lowered to 100
# (docs/RELIABILITY.md), not refused
$ cairn recall -k 1000 "ports" | grep -c ports
> 3
$ cairn recall -k 0 "ports"
? 2
