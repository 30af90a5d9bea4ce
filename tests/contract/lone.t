# EVIDENCE-OF: the lone-word rule: a hit that holds one word of the
# question while a heavier word of it is missing shares that word by
# chance and does not answer (negative control NO_LONE_WORD); calibration
# measures such a probe at its answerability before the rule
# (CALIBRATE_LONE_ZERO); a store under 50 records is not judged
$ cairn init >/dev/null
$ printf '%s\n' '{"id":"mig","kind":"decision","title":"Dropping columns","body":"We drop a column only after two releases that no longer read it."}' '{"id":"walmart","kind":"fact","title":"Walmart","body":"Sam Walton opened the first Walmart store in Rogers, Arkansas, in 1962."}' '{"id":"ci","kind":"rule","title":"CI","body":"Every merge runs the test suite and the linters."}' | cairn import >/dev/null
# three records: too few to tell a topic from an incidental word, so the
# one word in common answers
$ cairn recall --json "How do I tune a guitar to drop D?" | jq -c '[.hits[0].record.id, .lone.hits]'
> ["mig",0]
# 50 ordinary records more (they say "idea" and "come", not "guitar")
$ for i in $(seq 1 50); do printf '{"id":"n%02d","kind":"note","title":"Note %d","body":"The team had an idea to come back to the build on Monday, note %d."}\n' $i $i $i; done | cairn import >/dev/null
# "drop" is the only word in common, and "guitar" (never said) outweighs
# it: nothing answers
$ cairn recall --json "How do I tune a guitar to drop D?" | jq -c '[(.hits | length), .lone.hits > 0]'
> [0,true]
$ cairn recall --explain --no-floor "How do I tune a guitar to drop D?"
~ \| lone word: it holds one word of the question and a heavier one is missing: a word in common by chance, answerability 0
~ ^lone words: 1 hit held one word of the question while a heavier one was missing
# without the rule the same record is above the default floor
$ cairn recall --json --no-floor "How do I tune a guitar to drop D?" | jq -c '[.hits[0].record.id, .hits[0].answer, .lone.answer > 0.12]'
> ["mig",0,true]
# one word in common that is the question's heaviest answers: the record
# is about Walmart
$ cairn recall --json "where did the idea of walmart come from" | jq -c '[.hits[0].record.id, .lone.hits]'
> ["walmart",0]
# two words in common are no lone word
$ cairn recall --json "when do we drop a column" | jq -c '[.hits[0].record.id, .lone.hits]'
> ["mig",0]
# calibrate measures the probe at what its words reached before the rule
# (the median of one probe: that answerability, not 0 and so not the
# default 0.12)
$ echo "How do I tune a guitar to drop D?" > probes.txt
$ cairn calibrate --probes probes.txt --json | jq -c '.floor > 0.12'
> true
