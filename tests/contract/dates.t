# EVIDENCE-OF: answer type: a Chinese question that asks when
# (时间, 什么时候, 哪一年, ...) prefers, among records that match it about
# equally, the one that states a date (digits then 年/月/日/号); other
# questions rank by BM25 alone (tests/mutate: NO_DATE_BOOST)
$ cairn init >/dev/null
$ printf '%s\n' '{"id":"undated","kind":"fact","title":"","body":"君子盟首播定在周六晚上八点整。"}' '{"id":"dated","kind":"fact","title":"","body":"君子盟首播定在1月30日晚上。"}' | cairn import >/dev/null
# unrelated records, so that the question's words are rare (idf > 0)
$ for w in 订单服务使用数据库 缓存过期很快 部署走流水线 日志保存在对象存储 告警发到值班群 接口需要鉴权 前端用组件库 测试跑在容器里; do cairn write --kind note "$w" >/dev/null; done
# without the question word, the shorter record is ahead on BM25
$ cairn recall --json "君子盟首播" | jq -r '[.hits[].record.id] | join(" ")'
> undated dated
$ cairn recall --json "君子盟首播时间" | jq -r '[.hits[].record.id] | join(" ")'
> dated undated
$ cairn recall --json "君子盟什么时候首播？" | jq -r '.hits[0].record.id'
> dated
# Traditional script asks the same
$ cairn recall --json "君子盟首播時間" | jq -r '.hits[0].record.id'
> dated
$ cairn recall --explain "君子盟首播时间" | grep -c "date: x 1.10"
> 1
