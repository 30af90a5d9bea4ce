# EVIDENCE-OF: every write path refuses the credentials a mature
# scanner knows, disguised or not; --redact stores [REDACTED:<kind>]
$ cairn init >/dev/null
$ cairn write 'DefaultEndpointsProtocol=https;AccountName=acmeprod;AccountKey=U89K1D5a0HECbLMQsNcCGctd76LCNUH1lS/2wLfKkaVE+tNMO66iv9b4+b8p6k/csDZVefZO9jDOmlpFbYfogY==;EndpointSuffix=core.windows.net'
? 1
e~ refusing to store a secret: azure-storage-key on line 1
$ cairn write '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'
? 1
e~ refusing to store a secret: sendgrid-api-key on line 1
$ cairn write 'twilio key SK23a1e2f1a53bc9c276e6007ac6180c14'
? 1
e~ refusing to store a secret: twilio-api-key on line 1
$ cairn write 'HF 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'
? 1
e~ refusing to store a secret: huggingface-token on line 1
$ cairn write 'pypi-AgEIcHlwaS5vcmcclVKmtexpDSA3lxl7kettuA1fToZ0HpXyT4V3cSykBX0hB0RfZScs1EPvZhW'
? 1
e~ refusing to store a secret: pypi-token on line 1
$ cairn write 'bearer ya29.fZ5esavyL0dgpaqOkM5s2K0ksfMHM4OjHWN9cpoQZI5LBIb8azk1tCR0nIbOvV1LUBuzfkJacmIynp__'
? 1
e~ refusing to store a secret: google-oauth-token on line 1
$ cairn write 'curl -u admin:Xk29fjQ8zLp3 https://api.example.com'
? 1
e~ refusing to store a secret: cli-password on line 1
$ cairn write 'ssh -o '"'"'ProxyCommand=sshpass -p hunter2 ssh -W %h:%p bastion'"'"' db'
? 1
e~ refusing to store a secret: cli-password on line 1
$ cairn write 'password: correct horse battery staple'
? 1
e~ refusing to store a secret: passphrase on line 1
# disguised: base64, split over two lines, zero-width and full-width characters, URL-encoded
$ cairn write 'config YXdzX2FjY2Vzc19rZXlfaWQ9QUtJQVdCQUVRMEhWMDRZUE1US08='
? 1
e~ aws-access-key-id
$ cairn write "$(printf 'token ghp_QllyV9w9ejbPnW\nj7WZOAfSq8806s4BvSYuY8' )"
? 1
e~ github-token on line 1
$ cairn write "$(printf 'key AKIAWBAEQ\u200b0HV04YPMTKO')"
? 1
e~ aws-access-key-id
$ cairn write 'key AＫIＡWＢAＥQ０HＶ0４YＰMＴKＯ'
? 1
e~ aws-access-key-id
$ cairn write 'db postgres%3A%2F%2Fadmin%3AS3cretPass9%40db.example.com%2Fapp'
? 1
e~ password-in-url
# look-alikes pass: a commit, a UUID, a digest, a prefix in prose, a placeholder header
$ cairn write 'ghp_ prefixes mark GitHub tokens; commit 3f2a1c9e8b7d6a5f4e3d2c1b0a9f8e7d6c5b4a39, request 123e4567-e89b-12d3-a456-426614174000, sha256:9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08, header Authorization: Bearer <token>, password=changeme' --json | jq -r .status
> accepted
# --redact stores the masked text, naming the kind
$ cairn write --redact 'deploy with 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 today' --json | jq -r .id | xargs cairn get --json | jq -r .body
> deploy with [REDACTED:sendgrid-api-key] today
$ cairn write --redact 'key YXdzX2FjY2Vzc19rZXlfaWQ9QUtJQVdCQUVRMEhWMDRZUE1US08=' --json | jq -r .id | xargs cairn get --json | jq -r .body
> key [REDACTED:aws-access-key-id]
# revise is a write path
$ id=$(cairn write 'the deploy token lives in the vault' --json | jq -r .id); cairn revise "$id" --body 'the deploy token is dop_v1_c6a7e00b0edd2477051587bf1f47afdba79d0d06d40640367c80e1a9aa771948'
? 1
e~ digitalocean-token
# import
$ printf '%s\n' '{"kind":"fact","body":"mail via 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"}' > in.jsonl; cairn import in.jsonl
? 1
e~ line 1: import: .*sendgrid-api-key
# MCP memory_write
$ printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_write","arguments":{"kind":"fact","body":"HF token 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"}}}' | cairn mcp | jq -r 'select(.id == 2) | .result.content[0].text'
~ refusing to store a secret: huggingface-token
# ingest
$ printf '%s\n' '{"time":"2025-05-26T09:01:00+02:00","speaker":"alice","text":"use curl -u admin:Xk29fjQ8zLp3 for the api","session":"s-1"}' > t.jsonl; cairn ingest t.jsonl
? 1
e~ t\.jsonl:1: refusing to store a secret: cli-password
# seed
$ mkdir -p docs/adr && printf '# ADR 1: Mail\n\n## Decision\n\nWe send mail with key 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.\n' > docs/adr/0001-mail.md && cairn seed
? 1
e~ sendgrid-api-key
$ rm -rf docs
# reflect --llm-cmd gets the transcript masked
$ printf '%s\n' '{"speaker":"user","text":"We deploy with token SK23a1e2f1a53bc9c276e6007ac6180c14 always.","session":"p"}' > plan.jsonl; cairn reflect --dry-run --llm-cmd 'cat > llm-in.txt' plan.jsonl >/dev/null 2>&1; grep -c 'REDACTED:twilio-api-key' llm-in.txt; grep -c 'SK23a1e2f1a53bc9c276e6007ac6180c14' llm-in.txt || true
> 1
> 0
# nothing of any refused secret is anywhere in .cairn
$ grep -rl -e 'tGEwbEFonsIX0eZ776Hehd' -e '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' -e 'Xk29fjQ8zLp3' -e 'dop_v1_c6a7e00b0edd2477051587bf1f47afdba79d0d06d40640367c80e1a9aa771948' .cairn; echo done
> done
# EVIDENCE-OF: issue 31 item 7 -- a private key quoted as Markdown ("> " before
# each line) or split into string literals, and a token glued to a name
# (key_AKIA..., GITHUB_TOKEN_ghp_...), are refused on every write path
$ cairn write "$(printf '> Runbook: rotate the deploy key\n>\n> -----BEGIN RSA PRIVATE KEY-----\n> BvA5yUgWRzl2R0sQH0V25dNoLzwKzq5laanIun5rb9UeGly2RGhLwA8s4G9q3bxj\n> qXD2FYaslqvK9qFtMJxaly9YYg6/MMyRnGQ66Geq484YPIkyPWNmq1NN8x3/jr77\n> Ezn4Rv4MgvrwsnkFMcCQ5FoXQz8ZaWKYXujNdGPsne+mRL4/sWKVwlUVPNlqSH3C\n> -----END RSA PRIVATE KEY-----\n')"
? 1
e~ refusing to store a secret: private-key on line 3
$ cairn write "$(printf 'key = "-----BEGIN RSA PRIVATE KEY-----\\n" +\n    "BvA5yUgWRzl2R0sQH0V25dNoLzwKzq5laanIun5rb9UeGly2RGhLwA8s4G9q3bxj\\n" +\n    "qXD2FYaslqvK9qFtMJxaly9YYg6/MMyRnGQ66Geq484YPIkyPWNmq1NN8x3/jr77\\n" +\n    "-----END RSA PRIVATE KEY-----\\n";')"
? 1
e~ refusing to store a secret: private-key on line 1
$ cairn write 'CI reads GITHUB_TOKEN_ghp_C0cYtMPNUWTs9XHxNEP4nse4fc7pRqLaCEeJ from the vault'
? 1
e~ refusing to store a secret: github-token on line 1
$ cairn write 'the name key_AKIATN3TPRCC6RQM3XNZ was logged'
? 1
e~ refusing to store a secret: aws-access-key-id on line 1
$ cairn write --redact 'the name key_AKIATN3TPRCC6RQM3XNZ was logged' --json | jq -r .id | xargs cairn get --json | jq -r .body
> the name key_[REDACTED:aws-access-key-id] was logged
$ printf '%s\n' '{"kind":"fact","body":"maps use k_AIzapTyGJMuHbEL31IeL2HPcHyGcFRl1SPnXNYv"}' > glued.jsonl; cairn import glued.jsonl
? 1
e~ line 1: import: .*google-api-key
$ id=$(cairn write 'the droplet token lives in the vault' --json | jq -r .id); cairn revise "$id" --body 'the droplet token is k_dop_v1_3216fdaeeb975729fae923d5a4fd12aabfe228f219e9cb0eb53f16947ccf25ec'
? 1
e~ digitalocean-token
$ printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_write","arguments":{"kind":"fact","body":"bot x_xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx"}}}' | cairn mcp | jq -r 'select(.id == 2) | .result.content[0].text'
~ refusing to store a secret: slack-token
$ printf '%s\n' '{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-06-18","capabilities":{},"clientInfo":{"name":"t","version":"1"}}}' '{"jsonrpc":"2.0","method":"notifications/initialized"}' '{"jsonrpc":"2.0","id":2,"method":"tools/call","params":{"name":"memory_write","arguments":{"kind":"fact","body":"> -----BEGIN RSA PRIVATE KEY-----\n> BvA5yUgWRzl2R0sQH0V25dNoLzwKzq5laanIun5rb9UeGly2RGhLwA8s4G9q3bxj\n> qXD2FYaslqvK9qFtMJxaly9YYg6/MMyRnGQ66Geq484YPIkyPWNmq1NN8x3/jr77\n> -----END RSA PRIVATE KEY-----"}}}' | cairn mcp | jq -r 'select(.id == 2) | .result.content[0].text'
~ refusing to store a secret: private-key
$ mkdir -p docs/adr && printf '# ADR 2: Deploy key\n\n## Decision\n\nThe key, as handed over:\n\n> -----BEGIN OPENSSH PRIVATE KEY-----\n> BvA5yUgWRzl2R0sQH0V25dNoLzwKzq5laanIun5rb9UeGly2RGhLwA8s4G9q3bxj\n> qXD2FYaslqvK9qFtMJxaly9YYg6/MMyRnGQ66Geq484YPIkyPWNmq1NN8x3/jr77\n> -----END OPENSSH PRIVATE KEY-----\n' > docs/adr/0002-key.md && cairn seed
? 1
e~ private-key
$ rm -rf docs
# look-alikes glued to names still pass
$ cairn write 'hf_hub_download, npm_config_cache, sk_test_fixture_name, glpat_example, disk_test_VerifyChecksumOnRead and x_xoxb- are names' --json | jq -r .status
> accepted
$ grep -rl -e 'BvA5yUgWRzl2R0sQH0V25dNoLzwKzq5laanIun5rb9UeGly2RGhLwA8s4G9q3bxj' -e 'C0cYtMPNUWTs9XHxNEP4nse4fc7pRqLaCEeJ' -e 'AKIATN3TPRCC6RQM3XNZ' -e 'AIzapTyGJMuHbEL31IeL2HPcHyGcFRl1SPnXNYv' -e '3216fdaeeb975729fae923d5a4fd12aabfe228f219e9cb0eb53f16947ccf25ec' -e 'AbCdEfGhIjKlMnOpQrStUvWx' .cairn; echo done
> done
# a NuGet.config credential and Bundler's Sidekiq gem-server credentials
$ printf '<configuration><packageSourceCredentials><corp>\n  <add key="Username" value="ci@example.com" />\n  <add key="ClearTextPassword" value="Wq7#pLx2vN9k" />\n</corp></packageSourceCredentials></configuration>\n' > NuGet.config; cairn write "$(cat NuGet.config)"
? 1
e~ refusing to store a secret: password-assignment on line 3
$ cairn write 'export BUNDLE_ENTERPRISE__CONTRIBSYS__COM=3f9a1c7e:8b2d4f6a'
? 1
e~ refusing to store a secret: password-assignment
$ cairn write '<add key="ClearTextPassword" value="%NUGET_PASSWORD%" /> and BUNDLE_GEMS__CONTRIBSYS__COM=${SIDEKIQ_CREDS}' --json | jq -r .status
> accepted
