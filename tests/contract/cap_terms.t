# EVIDENCE-OF: a long question keeps at most 64 terms, and the words the
# store never says go first: as the rarest by idf they used to push out
# the words that match, so that a conversation-length question lost its
# real match (negative control CAP_UNSEEN_KEPT)
$ cairn init >/dev/null
$ printf '%s\n' '{"id":"zf","kind":"fact","title":"Zebrafish tanks","body":"The zebrafish tanks are cleaned on Tuesdays by the lab technicians."}' | cairn import >/dev/null
$ for i in $(seq 1 30); do printf '{"id":"n%02d","kind":"note","title":"Note %d","body":"Routine note %d about the weekly planning meeting."}\n' $i $i $i; done | cairn import >/dev/null
# 70 words no record says, then the one that matches
$ q="$(for i in $(seq 1 70); do printf 'qx%dword ' $i; done) zebrafish tanks"; cairn recall --json --no-floor "$q" | jq -c '[(.terms | split(" ") | length), (.terms | test("zebrafish")), .hits[0].record.id]'
> [64,true,"zf"]
# a short question is not capped: its unseen words stay and count
$ cairn recall --json --no-floor "quarkly blorptic zebrafish" | jq -c '[(.terms | split(" ") | length), .hits[0].record.id]'
> [3,"zf"]
