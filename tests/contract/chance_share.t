# EVIDENCE-OF: the chance test in a larger store: words in more than
# 1/sqrt(N) of the records but fewer than CAIRN_CHANCE_SHARE (2 %) are
# tested too, their meetings counted in the store; a record that holds
# three of them links them; and words common enough that a record of
# them all would be no more than chance are no test. Negative controls
# NO_CHANCE_SHARE, NO_CHANCE_TOGETHER and NO_CHANCE_ALL in tests/mutate
$ cairn init >/dev/null
# 5000 ordinary records, and three words each in 80 records of its own,
# never two in one record: 80 of 5250 (with the background records) is
# 1.5 %, above 1/sqrt(N) = 1.4 % and below 2 %; chance would put a pair of
# them in one record 1.2 times, all three 0.02 times
$ for i in $(seq 1 5000); do printf '{"id":"n%04d","kind":"note","title":"Note %d","body":"The build ran and the tests passed on the main branch, note %d."}\n' $i $i $i; done > notes.jsonl
$ for w in zorbex quillan maveth; do for i in $(seq 1 80); do printf '{"id":"%s%02d","kind":"note","title":"Item %d","body":"The %s sits on shelf %d of the store room."}\n' $w $i $i $w $i; done; done >> notes.jsonl
$ cairn import notes.jsonl
~ 5240
# each record matches a third of the question, above the default floor,
# but the words meet no more often than chance: nothing answers it
$ cairn recall --json "zorbex quillan maveth" | jq -c '[(.hits | length), .chance.words, .chance.met, .chance.unrelated]'
> [0,3,0,true]
$ cairn recall --json --no-floor "zorbex quillan maveth" | jq -c '[(.hits | length > 0)]'
> [true]
# one record that holds all three: chance would put three of them in one
# record 0.02 times, so it links them; the question is answered, it first
$ printf '{"id":"all","kind":"note","title":"Inventory","body":"The zorbex, the quillan and the maveth share one crate."}\n' | cairn import >/dev/null
$ cairn recall --json "zorbex quillan maveth" | jq -c '[.hits[0].record.id, .chance.together, .chance.unrelated]'
> ["all",3,false]
$ cairn recall --explain "zorbex quillan maveth"
~ ^chance: 3 specific words .*; one record of the pool holds 3 of them \(chance: 0\.0[0-9]+ times\): more than chance$
# two of the words: chance puts them together about once, so a record
# holding both (an answer) could not be told from chance: no test
$ cairn recall --json "zorbex quillan" | jq -c '[(.hits | length > 0), .chance.words, .chance.unrelated]'
> [true,2,false]
$ cairn recall --explain "zorbex quillan"
~ ^chance: 2 specific words .* \(a record of them all would be no more than chance: no test\)$
