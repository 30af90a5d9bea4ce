# Supersession on the write side (SPEC 5.5): `cairn write` and
# `cairn approve` list the live records of the same kind (and key family)
# with close text that the new record may replace, and say how to link
# them; nothing is linked automatically.
$ cairn init
~ initialized
$ cairn write --kind fact --key cache:ttl --title "Cache TTL" "The cache TTL is ten minutes for orders." --json | jq -r '.id, (.may_replace | length)' > old.txt; tail -1 old.txt
> 0
# a close text of the same kind and key family: listed, with the command
$ cairn write --kind fact --key cache:ttl2 --title "Cache TTL raised" "The cache TTL is thirty minutes for orders." --json | jq -r '.id as $n | .may_replace[] | "\(.id) \(.kind) \(.status) \(.same_key_family) \(.similarity > 0.5) \($n != .id)"' > got.txt; cat got.txt | cut -d' ' -f2-
> fact accepted true true true
$ [ "$(cut -d' ' -f1 got.txt)" = "$(head -1 old.txt)" ] && echo same
> same
# the human output names the old record and the command; nothing linked
$ cairn write --kind fact --key cache:ttl3 --title "Cache TTL again" "The cache TTL is thirty minutes for the orders." > out.txt; grep -c "^  r[0-9a-f]*  \[fact · accepted\] Cache TTL" out.txt; grep -o "^link one with: cairn supersede OLD r[0-9a-f]*$" out.txt | wc -l
> 2
> 1
$ cairn get "$(head -1 old.txt)" --json | jq -r '.status, .superseded_by'
> accepted
> null
# negative: another kind, or an unrelated text, lists nothing
$ cairn write --kind decision --title "Cache TTL" "The cache TTL is thirty minutes for orders." --json | jq -c .may_replace
> []
$ cairn write --kind fact --key cache:size --title "Disk size" "The build machines have two terabytes of disk." --json | jq -c .may_replace
> []
$ cairn write --kind fact --title "Weather" "It rained on Tuesday in the harbour." | grep -c "may replace"
> 0
? 1
# approve: an agent's candidate, once accepted, lists what it may replace
$ cairn write --origin agent --kind fact --key cache:ttl4 --title "Cache TTL now" "The cache TTL is thirty minutes for orders now." --json | jq -r .id > cand.txt; cat cand.txt | wc -l
> 1
$ cairn approve "$(cat cand.txt)" --json | jq -r '.status, (.may_replace | length > 0), ([.may_replace[] | .kind == "fact" and .status == "accepted"] | all)'
> accepted
> true
> true
$ cairn approve "$(cat cand.txt)"
? 1
# reject and forget list nothing
$ cairn write --origin agent --kind fact --title "Cache TTL maybe" "The cache TTL is thirty minutes for orders maybe." --json | jq -r .id > cand2.txt; cairn reject "$(cat cand2.txt)" --json | jq -c 'has("may_replace")'
> false
$ cairn approve --help | head -1
~ usage
