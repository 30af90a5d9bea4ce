# EVIDENCE-OF: cairn eval --offtopic asks every store each question of a
# file and counts those recall returns nothing for; a bad file is an error
$ mkdir d && printf '%s\n' '{"id":"c1","text":"the cat sleeps on the sofa"}' '{"id":"c2","text":"the dog barks at the postman"}' > d/corpus.jsonl && printf '%s\n' '{"id":"q1","text":"where does the cat sleep","answers":["c1"]}' > d/queries.jsonl
$ printf '%s\n' '# a comment, then a blank line' '' 'which dog barks' 'how do I tune a guitar' > off.txt
$ cairn eval d --offtopic off.txt --json --quiet | jq -c '.offtopic'
> {"asked":2,"quiet":1,"quiet_rate":0.5}
$ cairn eval d --offtopic off.txt --quiet | grep '^offtopic'
> offtopic 1 of 2 off-topic questions got nothing (50%)
# per group: every store is asked every question
$ printf '%s\n' '{"id":"c1","text":"the cat sleeps on the sofa","group":"a"}' '{"id":"c2","text":"the dog barks at the postman","group":"b"}' > d/corpus.jsonl && printf '%s\n' '{"id":"q1","text":"where does the cat sleep","answers":["c1"],"group":"a"}' '{"id":"q2","text":"which dog barks","answers":["c2"],"group":"b"}' > d/queries.jsonl
$ cairn eval d --per-group --offtopic off.txt --json --quiet | jq -c '[.offtopic.asked, .offtopic.quiet]'
> [4,3]
# without the option there is no offtopic object
$ cairn eval d --json --quiet | jq -c 'has("offtopic")'
> false
$ cairn eval d --offtopic missing.txt --quiet
? 1
e~ cannot read 'missing.txt'
$ printf '# only a comment\n' > empty.txt; cairn eval d --offtopic empty.txt --quiet
? 1
e~ holds no question
