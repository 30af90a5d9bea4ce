# EVIDENCE-OF: Chinese questions about English records: the
# built-in engineering glossary (src/text/glossary.c) gives the engineering
# sense of the question's Chinese words (明文 -> plaintext, 值班 -> on-call,
# 跳板机 -> bastion, 正式 + 环境 -> production), with no CC-CEDICT file
# configured (tests/mutate: NO_GLOSSARY)
$ cairn init >/dev/null
$ cairn write --kind decision --key adr:encrypt --title "Encrypt submitted answers" "Answers are encrypted with application-level encryption, so they are never stored in the database as plaintext." >/dev/null
$ cairn write --kind decision --key adr:oncall --title "Out of hours support" "An on-call rota covers incidents outside office hours; alerts page the engineer on duty." >/dev/null
$ cairn write --kind decision --key adr:bastion --title "Reaching the production database" "Engineers reach the production database only through a bastion host with short-lived credentials." >/dev/null
$ cairn write --kind decision --key adr:uploads --title "File uploads" "Files uploaded by users are kept in an object storage bucket and scanned for malware before anyone opens them." >/dev/null
$ for w in "Use PostgreSQL for form definitions" "Deploy every merge with the pipeline" "Translate API responses at request time" "Order pages by pointers"; do cairn write --kind decision "$w" >/dev/null; done
$ CAIRN_BILINGUAL= cairn recall --no-floor --json "表单答案在数据库里是明文存储的吗？" | jq -r '.hits[0].record.key'
> adr:encrypt
$ CAIRN_BILINGUAL= cairn recall --no-floor --json "下班时间出了事故由谁值班处理？" | jq -r '.hits[0].record.key'
> adr:oncall
# 正式 and 环境 are two words to the segmenter: the pair is looked up too
$ CAIRN_BILINGUAL= cairn recall --no-floor --explain "能不能通过跳板机连到正式环境的资料库？" | grep "^terms searched"
~ bastion .*product
$ CAIRN_BILINGUAL= cairn recall --no-floor --json "能不能通过跳板机连到正式环境的资料库？" | jq -r '.hits[0].record.key'
> adr:bastion
# Traditional script folds to the same words
$ CAIRN_BILINGUAL= cairn recall --no-floor --json "上傳的檔案存在哪裡？有沒有做惡意程式掃描？" | jq -r '.hits[0].record.key'
> adr:uploads
# a word the store says in Chinese is searched as it is, not glossed
$ cairn write --kind note "明文密码一律禁止提交" >/dev/null
$ CAIRN_BILINGUAL= cairn recall --no-floor --explain "明文" | grep "^terms searched"
> terms searched: 明文
