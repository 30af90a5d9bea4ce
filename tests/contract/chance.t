# EVIDENCE-OF: the chance test: a question of specific words
# that the store's records never hold together beyond chance (random
# words) is not answered by a record holding one of them; negative
# control NO_CHANCE in tests/mutate
$ cairn init >/dev/null
# 40 ordinary records, and three rare words (in under 1/sqrt(N) of the
# records), each in three records of its own, never two in one record:
# chance would put a pair of them in one record 0.7 times
$ for i in $(seq 1 40); do printf '{"id":"n%02d","kind":"note","title":"Note %d","body":"The build ran and the tests passed on the main branch, note %d."}\n' $i $i $i; done > notes.jsonl
$ for w in zorbex quillan maveth; do for i in 1 2 3; do printf '{"id":"%s%d","kind":"note","title":"Item %d","body":"The %s sits on shelf %d of the store room."}\n' $w $i $i $w $i; done; done >> notes.jsonl
$ cairn import notes.jsonl
~ 49
# each record matches a third of the question (above the default floor),
# but the words meet no more often than chance: nothing answers it
$ cairn recall --json "zorbex quillan maveth" | jq -c '[(.hits | length), .chance.words, .chance.met, .chance.unrelated]'
> [0,3,0,true]
$ cairn recall --explain "zorbex quillan maveth"
~ ^chance: 3 specific words .* meet 0 times in the store's records: no more than chance, the words are unrelated in this store: answerability 0$
# without the test the same hits are above the floor
$ cairn recall --json --no-floor "zorbex quillan maveth" | jq -c '[(.hits | length > 0)]'
> [true]
# a record that holds them together: the words are related, the question
# is answered, that record first
$ printf '{"id":"all","kind":"note","title":"Inventory","body":"The zorbex, the quillan and the maveth share one crate."}\n' | cairn import >/dev/null
$ cairn recall --json "zorbex quillan maveth" | jq -c '[.hits[0].record.id, .chance.unrelated]'
> ["all",false]
# one specific word is no test: a single rare word is answered
$ cairn recall --json "where is the zorbex" | jq -c '[(.hits | length > 0), .chance.unrelated]'
> [true,false]
