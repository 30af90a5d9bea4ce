# EVIDENCE-OF: SPEC 5.2 -- recall finds the answer, returns nothing off-topic,
# and never returns statuses that were not asked for
$ cairn init >/dev/null
$ printf '%s\n' '{"id":"pg","kind":"adr","title":"Use PostgreSQL for orders","body":"Orders are stored in PostgreSQL 15 on RDS; DynamoDB was rejected."}' '{"id":"deploy","kind":"procedure","title":"Deploying","body":"Merges to main deploy to ECS Fargate through GitHub Actions."}' '{"id":"cache","kind":"fact","title":"缓存使用 Redis 集群","body":"订单服务的缓存使用 Redis 集群，过期时间为十分钟。"}' '{"id":"old","kind":"fact","status":"false","title":"Rate limit","body":"The gateway rate limit is 100 requests per minute."}' '{"id":"stale","kind":"fact","status":"stale","title":"Rate limit history","body":"Rate limit was raised for partners."}' | cairn import >/dev/null
$ cairn recall --json "which database stores the orders?" | jq -r '.hits[0].record.id'
> pg
$ cairn recall --json "how do we deploy to production?" | jq -r '.hits[0].record.id'
> deploy
# Chinese: segmented, so a sub-word question finds the record
$ cairn recall --json "缓存用的是什么？" | jq -r '.hits[0].record.id'
> cache
# stop words and stop-character bigrams (用的, 的是) leave only the topic
$ cairn recall --explain "缓存用的是什么？" | grep "^terms searched"
> terms searched: 缓存
# English stop words are dropped as the tokenizer emits them (Snowball
# stems: why -> whi, does -> doe, any -> ani), pronouns too
$ cairn recall --explain "why does any of her orders use PostgreSQL?" | grep "^terms searched"
> terms searched: order use postgr postgresql sql
# every word of the English stop list, as written in a question
$ cairn recall --explain "zebra a about am an and any are as at be been but by can could did do does doing for from had has have how i if in into is it its me my of on or our should so than that the their them then there these they this those to us was we were what when where which who whom why will with would you your s t d ll re ve m also just some such up out there he she her hers him his herself himself itself myself yourself yours ours theirs themselves ourselves" | grep "^terms searched"
> terms searched: zebra
# Traditional characters fold to Simplified
$ cairn recall --json "訂單服務的緩存" | jq -r '.hits[0].record.id'
> cache
# off-topic: empty, exit 0
$ cairn recall --json "how do I bake sourdough bread?" | jq -c '.hits'
> []
$ cairn recall "how do I bake sourdough bread?"
~ ^no record answers this
# ... also when it shares a word with a record: only the floor empties this one
$ cairn recall --json "which sourdough starter, flour and oven temperature work best for baking rye bread on main street?" | jq -c '[(.hits | length), .dropped]'
> [0,1]
$ cairn recall --json --no-floor "which sourdough starter, flour and oven temperature work best for baking rye bread on main street?" | jq -r '.hits[0].record.id'
> deploy
# a false or stale record never leaks into default recall
$ cairn recall --json "what is the gateway rate limit?" | jq -r '.hits[].record.id'
>
# ... and what recall did not return is not marked as seen
$ cairn get old --json | jq -r '.last_seen'
> null
$ cairn recall --json --status false,stale "what is the gateway rate limit?" | jq -r '.hits[].record.id' | sort
> old
> stale
$ cairn recall --json --kind adr "orders" | jq -r '.hits[].record.kind' | sort -u
> adr
# explain shows each step
$ cairn recall --explain "which database stores the orders?"
~ bm25: rank [0-9]+, raw [0-9.]+
~ matched: .*postgresql|matched: .*order
~ answer: 0\.[0-9]+ = matched [0-9.]+ / question [0-9.]+ of IDF mass \(never said in the store: [0-9.]+\)
~ floor: question 0\.[0-9]+ > 0\.12 \(default, not calibrated\): answered; hit 0\.[0-9]+ > 0\.12 \(each hit: the lower of the floor and 0\.12\) -> kept,
~ weight: 2\.00 \(adr, accepted\)
# receipts: id in --json, content by 'cairn receipt'
$ r=$(cairn recall --json "orders database" | jq -r .receipt); cairn receipt --json "$r" | jq -r '.ids[0], .provider, (.query_sha256 | length)'
> pg
> bm25
> 64
$ cairn receipt qnope
? 1
e~ no receipt 'qnope'
# the same question normalised gives the same hash
$ a=$(cairn recall --json "Orders   DATABASE" | jq -r .receipt); b=$(cairn recall --json "orders database" | jq -r .receipt); [ "$(cairn receipt --json $a | jq -r .query_sha256)" = "$(cairn receipt --json $b | jq -r .query_sha256)" ] && echo same
> same
# last_seen is set for returned records
$ cairn get pg --json | jq -r '.last_seen != null'
> true
# usage and errors
$ cairn recall
? 2
$ cairn recall -k 0 x
? 2
$ cairn recall --status maybe "orders"
? 1
e~ unknown status 'maybe'
$ cairn recall "$(printf 'bad \377 byte')"
? 1
e~ not valid UTF-8 at byte 4
# the status filter runs after FTS5 ranks: when it empties the first 800
# candidates, recall widens to every match instead of answering nothing
$ mkdir wide && cd wide && cairn init >/dev/null && awk 'BEGIN { for (i = 0; i < 900; i++) printf "{\"id\":\"x%03d\",\"kind\":\"fact\",\"status\":\"false\",\"body\":\"zebra crossing\"}\n", i; printf "{\"id\":\"keep\",\"kind\":\"fact\",\"body\":\"zebra %s\"}\n", "and a much longer body that lowers its bm25 score well below the others here" }' | cairn import >/dev/null && cairn recall --json "zebra" | jq -r '[.hits[].record.id] | join(" ")'
> keep
