# EVIDENCE-OF: the hook's own operating point (issue 32): an entry needs
# an answerability of 0.33 and four of the question's words in common (or
# three quarters of a shorter question's), so that the two everyday words
# a prompt shares with some record by chance inject nothing (negative
# control HOOK_NO_GATE); entries are ordered by the figure they print,
# and a second entry is within 0.8 of the first (HOOK_NO_NEAR)
$ cairn init >/dev/null && printf '%s\n' '{"id":"vt","kind":"decision","title":"Swapping the JS test framework Jest for Vitest","body":"We replace Jest with Vitest: it runs our frontend tests faster and shares the Vite config."}' '{"id":"ci","kind":"rule","title":"Tests in CI","body":"Every merge runs the test suite and the linters in CI; coverage must not drop."}' '{"id":"pg","kind":"adr","title":"Use PostgreSQL for orders","body":"Orders are stored in PostgreSQL 15 on RDS."}' '{"id":"n1","kind":"note","title":"Coffee","body":"The coffee machine is on floor three."}' | cairn import >/dev/null
# recall answers it (two words in common, above the floor) ...
$ cairn recall --json "Write a go single test framework for me" | jq -c '[.hits[0].record.id, .hits[0].matched]'
> ["vt","test framework"]
# ... the hook does not: "test framework" is what any project says
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"Write a go single test framework for me"}' "$PWD" | cairn hook --local | wc -c
> 0
# the question the record answers is injected, with its figure
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"Should we swap the Jest test framework for Vitest?"}' "$PWD" | cairn hook --local | jq -r .hookSpecificOutput.additionalContext | grep '^\['
~ ^\[1\] .* · relevance 1\.00 · id vt$
# two records pass the test; the second (0.34) is far below the first
# (0.65): one entry
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"Do the frontend tests run faster with Vitest and the shared Vite config than with Jest, and does CI coverage of the suite change?"}' "$PWD" | cairn hook --local | jq -r .hookSpecificOutput.additionalContext | grep -c '^\['
> 1
$ cairn recall --json "Do the frontend tests run faster with Vitest and the shared Vite config than with Jest, and does CI coverage of the suite change?" | jq -c '[.hits[] | .record.id]'
> ["vt","ci"]
# two of equal strength: both, in the order of their figures
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"Should the frontend tests move from Jest to Vitest, and does the CI coverage of the test suite change?"}' "$PWD" | cairn hook --local | jq -r .hookSpecificOutput.additionalContext | grep '^\[' | sed 's/.*relevance \([0-9.]*\).*id \(.*\)/\1 \2/'
> 0.38 vt
> 0.38 ci
# a question wrapped in a prompt (context before, instructions after): the
# prompt as one bag of words answers nothing, its asking sentence alone
# does (HOOK_NO_ASKS: the prompt read as one bag of words)
$ printf '%s' 'Morning! Picking this up again after the long weekend, lots of meetings and sprint planning today, coffee first. Should we swap the Jest test framework for Vitest? Once you know, sketch the change but do not commit yet, and keep an eye on the flaky integration suite, the linter warnings and the release notes.' > wrapped.txt && cairn recall --json "$(cat wrapped.txt)" | jq '.hits | length'
> 0
$ jq -Rs --arg cwd "$PWD" '{hook_event_name: "UserPromptSubmit", cwd: $cwd, prompt: .}' wrapped.txt | cairn hook --local | jq -r .hookSpecificOutput.additionalContext | grep '^\['
~ ^\[1\] .* · relevance 1\.00 · id vt$
# the same question inside fenced code (a pasted log) is not asked
$ printf '%s\n' 'Morning! Picking this up again after the long weekend, lots of meetings and sprint planning today, coffee first. Here is the log:' '```' 'Should we swap the Jest test framework for Vitest?' '```' 'Once you know, sketch the change but do not commit yet, and keep an eye on the flaky integration suite, the linter warnings and the release notes.' > fenced.txt && jq -Rs --arg cwd "$PWD" '{hook_event_name: "UserPromptSubmit", cwd: $cwd, prompt: .}' fenced.txt | cairn hook --local | wc -c
> 0
# numbers in common are no words in common (versions, counts, dates): the
# record shares "2 3 10 item" with the prompt, three of them numbers
# (HOOK_NUMBERS_COUNT)
$ cairn write --kind fact -t "Paging" "Version 2 of the orders API returns 3 fields and 10 items per page." >/dev/null && cairn recall --json "Sort these: 2, 3, 10 items?" | jq -c '[.hits[0].record.title, .hits[0].matched]'
> ["Paging","2 3 10 item"]
$ printf '{"hook_event_name":"UserPromptSubmit","cwd":"%s","prompt":"Sort these: 2, 3, 10 items?"}' "$PWD" | cairn hook --local | wc -c
> 0
