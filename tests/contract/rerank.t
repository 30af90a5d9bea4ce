# Cross-encoder rerank: off by default; asked for without
# a model it is an error; a configured model that cannot run leaves the
# order and says why. tests/t_rerank.sh runs it with a generated model.
$ cairn init
~ initialized
$ cairn write -t "quick fox" "the quick brown fox jumps over the lazy dog" > /dev/null; cairn write -t "fox and dog" "a fox and a dog in the index" > /dev/null; cairn write -t "brown fox notes" "brown fox in the store" > /dev/null
# (--no-floor: three hits, so there is an order to rerank)
# off by default: not reranked, the receipt's provider is plain bm25
$ cairn recall --no-floor --json "quick brown fox" | jq -c '[.reranked, (.hits | length), has("rerank")]'
> [false,3,false]
$ cairn receipt "$(cairn recall --no-floor --json "quick brown fox" | jq -r .receipt)" --json | jq -r .provider
> bm25
# asked for without a model: an error that names the ways to give one
$ cairn recall --no-floor --rerank "quick brown fox"
? 1
e~ no rerank model: give one \(--rerank=FILE\) or set CAIRN_RERANK_MODEL
$ cairn recall --no-floor --rerank= "quick brown fox"
? 2
$ cairn recall --no-floor --rerank=missing.gguf "quick brown fox"
? 1
e~ cannot read the rerank model 'missing.gguf'
# a configured model that cannot be loaded: the recall still answers, in its own order
$ CAIRN_RERANK_MODEL=missing.gguf cairn recall --no-floor --json "quick brown fox" | jq -c '[.reranked, (.hits | length), (.notice | test("rerank skipped"))]'
> [false,3,true]
$ CAIRN_RERANK_MODEL=missing.gguf cairn recall --no-floor "quick brown fox"
e~ note: rerank skipped: cannot read the rerank model
# --no-rerank wins over the configuration: no note
$ CAIRN_RERANK_MODEL=missing.gguf cairn recall --no-floor --no-rerank --json "quick brown fox" | jq -c '[.reranked, .notice]'
> [false,null]
# the store's setting works the same way
$ sqlite3 .cairn/cairn.db "INSERT OR REPLACE INTO meta VALUES ('rerank.model','models/none.gguf')" && cairn recall --no-floor --json "quick brown fox" | jq -r .notice
~ rerank skipped: cannot read the rerank model '.*/models/none.gguf'
$ cairn recall --help | grep -c -- "--rerank\[=FILE\]\|--no-rerank"
> 2
