"""The dev13 round of the secrets probe: vendors' token formats from gitleaks' rule set and trufflehog's detectors.

Each format names the rule it follows (gitleaks ``config/gitleaks.toml`` at b58d3f10, trufflehog
``pkg/detectors/<name>`` at 3ab759fe); its value is drawn from a seeded random generator in the published shape
(prefix, alphabet, length), so none is a real credential. Each value is put into the lines programs print it in:
JSON log fields (flat and nested), env dumps, HTTP headers of verbose clients, command lines, URLs, YAML and INI
config prints and Python reprs. ``LOOK_ALIKES`` are values of the same places that hold no secret (ids, hashes,
digests, UUIDs, masks, base64 of plain data, instance types) and must come out as written.

    python -m devtools.secret_probe generate dev13    # writes tests/fixtures/secret_probe/dev13.jsonl only
"""

from __future__ import annotations

import base64
import string
from pathlib import Path

from devtools.secret_probe_draws import Case, Draws, LookAlike, case_rows, keep_rows, write_rows
from devtools.secret_probe_kinds import ALNUM, HEX, LOWER_DIGITS, UPPER_DIGITS, URLSAFE

_draws = Draws(13013)
rand, uuid4 = _draws.rand, _draws.uuid4
_TS = "2026-05-01 10:14:22,481"


def _formats() -> list[Case]:
    """(kind, source, secret, [(context, text with {s})])."""
    f: list[Case] = []
    add = f.append
    add(("sonarqube_token", "gitleaks sonar-api-token (squ_/sqp_/sqa_ + 40)", "squ_" + rand(40, HEX), [
        ("scanner_cli_arg", "+ sonar-scanner -Dsonar.projectKey=ml-platform -Dsonar.host.url=https://sonar.acme.io "
                            "-Dsonar.token={s}"),
        ("json_field", '{"level":"debug","logger":"sonar.client","msg":"using project analysis token",'
                       '"token":"{s}","host":"https://sonar.acme.io"}'),
        ("prose", f"{_TS} INFO ci: uploading report with {{s}} (analysis id AY{rand(18, URLSAFE)})"),
    ]))
    add(("sonarqube_project_token", "gitleaks sonar-api-token (sqp_)", "sqp_" + rand(40, HEX), [
        ("env_dump", "+ env | sort\nHOME=/root\nSONAR_HOST_URL=https://sonar.acme.io\nSONAR_TOKEN={s}\nUSER=ci"),
        ("properties_print", "INFO: Project root configuration file: /src/sonar-project.properties\n"
                             "sonar.projectKey=ml-platform\nsonar.login={s}\nsonar.sources=src"),
    ]))
    add(("sonarcloud_token", "trufflehog sonarcloud v2 (sqco_ + 59)", "sqco_" + rand(59, ALNUM), [
        ("bare_error", "ERROR: Error during SonarScanner execution: Not authorized. Token {s} is not valid"),
        ("github_action_env", "env:\n  SONAR_TOKEN: {s}\n  SONAR_HOST_URL: https://sonarcloud.io"),
    ]))
    add(("elevenlabs_key", "trufflehog elevenlabs v2 (sk_ + 48 hex)", "sk_" + rand(48, HEX), [
        ("http_header", "send: b'POST /v1/text-to-speech/21m00Tcm4TlvDq8ikWAM HTTP/1.1\\r\\nHost: api.elevenlabs.io"
                        "\\r\\nxi-api-key: {s}\\r\\nContent-Type: application/json\\r\\n\\r\\n'"),
        ("python_repr", "DEBUG tts: client=ElevenLabs(api_key='{s}', base_url='https://api.elevenlabs.io')"),
        ("bare_prose", f"{_TS} WARNING tts: 401 from voice synth for {{s}}, falling back to local model"),
    ]))
    add(("deno_deploy_token", "trufflehog deno (ddp_/ddw_ + 36)", "ddp_" + rand(36, ALNUM), [
        ("cli_arg", "+ deployctl deploy --project=eval-dashboard --token={s} main.ts"),
        ("bare_prose", "error: The token {s} does not have access to project eval-dashboard"),
    ]))
    add(("posthog_personal_key", "trufflehog posthog (phx_ + 43)", "phx_" + rand(43, ALNUM), [
        ("json_nested", '{"ts":"2026-05-01T10:14:22Z","msg":"analytics exporter","config":{"posthog":'
                        '{"host":"https://eu.posthog.com","personal_api_key":"{s}"}}}'),
        ("curl_header", "> GET /api/projects/ HTTP/2\n> Host: eu.posthog.com\n> Authorization: Bearer {s}\n"
                        "> User-Agent: curl/8.5.0"),
        ("bare_prose", "posthog: request failed for key {s}: 403 permission_denied"),
    ]))
    add(("hubspot_private_app_token", "trufflehog hubspot_apikey v2 (pat-na1-/pat-eu1- + uuid)",
         "pat-na1-" + uuid4(), [
             ("python_dict_repr", f"{_TS} DEBUG crm.sync: headers={{'Authorization': 'Bearer {{s}}', "
                                  "'Content-Type': 'application/json'}"),
             ("yaml_print", "crm:\n  provider: hubspot\n  access_token: {s}\n  portal: 26480412"),
             ("bare_prose", "hubspot sync: token {s} lacks scope crm.objects.contacts.read"),
         ]))
    add(("contentful_pat", "trufflehog contentfulpersonalaccesstoken (CFPAT- + 43)", "CFPAT-" + rand(43, URLSAFE), [
        ("cli_arg", "+ contentful space export --space-id 7x2k9m --management-token {s} --export-dir /tmp/cf"),
        ("json_field", '{"level":30,"msg":"cma client","accessToken":"{s}","space":"7x2k9m"}'),
    ]))
    add(("circleci_pat", "trufflehog circleci v2 (CCIPAT_ + 22 + _ + 40 hex)",
         "CCIPAT_" + rand(22, ALNUM) + "_" + rand(40, HEX), [
             ("curl_header", "> POST /api/v2/project/gh/acme/trainer/pipeline HTTP/1.1\n> Host: circleci.com\n"
                             "> Circle-Token: {s}\n> Content-Type: application/json"),
             ("env_dump", "declare -x CIRCLE_BRANCH=\"main\"\ndeclare -x CIRCLE_TOKEN=\"{s}\"\n"
                          "declare -x CIRCLE_WORKFLOW_ID=\"" + uuid4() + "\""),
             ("bare_prose", "circleci: trigger refused, {s} is revoked"),
         ]))
    add(("netlify_pat", "trufflehog netlify v2 (nfp_ + 36)", "nfp_" + rand(36, ALNUM), [
        ("cli_arg", "+ netlify deploy --prod --dir=dist --auth {s} --site 3f1a2b4c"),
        ("ini_print", "[netlify]\nsite_id = 3f1a2b4c\nauth_token = {s}\n"),
        ("bare_prose", "Netlify API error: token {s} unauthorized"),
    ]))
    add(("launchdarkly_key", "trufflehog launchdarkly ((api|sdk)- + uuid v4)", "sdk-" + uuid4(), [
        ("python_repr", "INFO ldclient.util: Config(sdk_key='{s}', offline=False, stream=True)"),
        ("json_field", '{"level":"info","msg":"feature flags","ld_sdk_key":"{s}","flags":42}'),
    ]))
    add(("launchdarkly_api_key", "trufflehog launchdarkly (api- + uuid v4)", "api-" + uuid4(), [
        ("curl_header", "> PATCH /api/v2/flags/ml/new-tokenizer HTTP/1.1\n> Host: app.launchdarkly.com\n"
                        "> Authorization: {s}\n"
                        "> Content-Type: application/json; domain-model=launchdarkly.semanticpatch"),
        ("bare_prose", "launchdarkly: access token {s} has role reader, cannot update flag"),
    ]))
    add(("lob_key", "trufflehog lob; gitleaks lob-api-key ((live|test)_ + 35 hex)", "live_" + rand(35, HEX), [
        ("env_dump", "+ printenv\nLOB_API_KEY={s}\nPATH=/usr/bin"),
        ("basic_userinfo", "POST https://{s}:@api.lob.com/v1/letters -> 401"),
        ("bare_prose", "lob: key {s} rejected"),
    ]))
    add(("gocardless_token", "gitleaks gocardless-api-token; trufflehog gocardless (live_ + 40)",
         "live_" + rand(40, URLSAFE), [
             ("yaml_print", "payments:\n  gocardless:\n    access_token: {s}\n    environment: live"),
             ("python_repr", "gocardless_pro.Client(access_token='{s}', environment='live')"),
         ]))
    add(("octopus_api_key", "gitleaks octopus-deploy-api-key (API- + 26)", "API-" + rand(26, UPPER_DIGITS), [
        ("curl_header", "> GET /api/Spaces-1/projects HTTP/1.1\n> Host: acme.octopus.app\n> X-Octopus-ApiKey: {s}"),
        ("cli_arg", "+ octo create-release --project trainer --server https://acme.octopus.app --apiKey {s}"),
        ("bare_prose", "Octopus: the API key {s} you provided was not valid"),
    ]))
    add(("yandex_api_key", "gitleaks yandex-api-key (AQVN + 35..38)", "AQVN" + rand(36, URLSAFE), [
        ("http_header", "> POST /foundationModels/v1/completion HTTP/1.1\n> Host: llm.api.cloud.yandex.net\n"
                        "> Authorization: Api-Key {s}"),
        ("json_field", '{"level":"info","msg":"yandexgpt client","yandex_api_key":"{s}"}'),
        ("bare_prose", "yc: api key {s} is not allowed for folder b1g0abc"),
    ]))
    add(("yandex_iam_token", "gitleaks yandex-access-token (t1. + ... + 86)",
         "t1.9euelZq" + rand(30, URLSAFE) + "." + rand(86, URLSAFE), [
             ("cli_output", "$ yc iam create-token\n{s}"),
             ("http_header", "> GET /storage/v1/buckets HTTP/1.1\n> Authorization: Bearer {s}"),
             ("python_repr", "DEBUG sdk: Credentials(iam_token='{s}')"),
         ]))
    add(("yandex_static_key", "gitleaks yandex-aws-access-token (YC + 38)", "YC" + rand(38, URLSAFE), [
        ("ini_print", "[default]\naws_access_key_id = YCAJE" + rand(20, URLSAFE) + "\naws_secret_access_key = {s}"),
        ("bare_prose", "s3: SignatureDoesNotMatch for secret {s} at storage.yandexcloud.net"),
    ]))
    add(("intra42_secret", "gitleaks intra42-client-secret (s-s4t2ud- + 64 hex)", "s-s4t2ud-" + rand(64, HEX), [
        ("json_field", '{"msg":"oauth app","app":"ft_trainer","client_secret":"{s}"}'),
        ("bare_prose", "oauth: token exchange failed with s4t2 secret {s}"),
    ]))
    add(("authress_key", "gitleaks authress-service-client-access-key",
         f"sc_{rand(18, LOWER_DIGITS)}.{rand(4, LOWER_DIGITS)}.acc_{rand(14, LOWER_DIGITS)}.{rand(64, URLSAFE)}", [
             ("env_dump", "AUTHRESS_URL=https://acme.api.authress.io\nAUTHRESS_SERVICE_CLIENT_ACCESS_KEY={s}"),
             ("bare_prose", "authress: access key {s} was revoked"),
         ]))
    add(("square_access_token", "gitleaks square-access-token (EAAA + 22..60)", "EAAA" + rand(60, URLSAFE), [
        ("python_dict_repr", "square: {'access_token': '{s}', 'environment': 'production'}"),
        ("curl_header", "> POST /v2/payments HTTP/2\n> Host: connect.squareup.com\n> Authorization: Bearer {s}"),
        ("bare_prose", "square: UNAUTHORIZED for {s}"),
    ]))
    add(("square_sandbox_secret", "trufflehog squareapp (sandbox-sq0csb- + 43)", "sandbox-sq0csb-" + rand(43, URLSAFE),
         [("bare_prose", "oauth: code exchange with app secret {s} returned 401"),
          ("json_nested", '{"msg":"payments","square":{"environment":"sandbox","app_secret":"{s}"}}')]))
    add(("salesforce_session", "trufflehog salesforce (00 + 13 + ! + 96)",
         "00D" + rand(12, ALNUM) + "!" + rand(96, ALNUM + "._"), [
             ("curl_header", "> GET /services/data/v60.0/sobjects/Account HTTP/1.1\n> Host: acme.my.salesforce.com\n"
                             "> Authorization: Bearer {s}"),
             ("json_field", '{"level":"debug","msg":"sf login","access_token":"{s}",'
                            '"instance_url":"https://acme.my.salesforce.com"}'),
             ("bare_prose", "simple_salesforce: INVALID_SESSION_ID for {s}"),
         ]))
    add(("dropbox_short_lived", "trufflehog dropbox; gitleaks dropbox-short-lived-api-token (sl. + 130+)",
         "sl.u." + rand(140, URLSAFE), [
             ("python_repr", "dropbox.Dropbox(oauth2_access_token='{s}', timeout=100)"),
             ("http_header", "> POST /2/files/upload HTTP/1.1\n> Host: content.dropboxapi.com\n"
                             "> Authorization: Bearer {s}"),
             ("bare_prose", "dropbox: expired_access_token {s}"),
         ]))
    add(("bitbucket_app_password", "trufflehog bitbucketapppassword (ATBB + 32)", "ATBB" + rand(28, ALNUM) +
         rand(8, UPPER_DIGITS), [
             ("url_userinfo", "fatal: unable to access 'https://ml-bot:{s}@bitbucket.org/acme/trainer.git/': "
                              "The requested URL returned error: 403"),
             ("env_dump", "BITBUCKET_USERNAME=ml-bot\nBITBUCKET_APP_PASSWORD={s}"),
             ("bare_prose", "bitbucket: app password {s} lacks repository:write"),
         ]))
    add(("twitter_bearer", "gitleaks twitter-bearer-token (A{22} + 80..100)",
         "A" * 22 + rand(40, ALNUM) + "%3D" + rand(50, ALNUM), [
             ("yaml_print", "twitter:\n  bearer_token: {s}\n  stream: filtered"),
             ("curl_header", "> GET /2/tweets/search/recent?query=llm HTTP/2\n> Host: api.twitter.com\n"
                             "> authorization: Bearer {s}"),
         ]))
    add(("clickup_pat", "trufflehog clickuppersonaltoken (pk_ + 7..9 digits + _ + 32)",
         "pk_" + rand(8, string.digits) + "_" + rand(32, UPPER_DIGITS), [
             ("json_field", '{"level":"info","msg":"task sync","clickup_token":"{s}","list":901}'),
             ("curl_header", "> GET /api/v2/team HTTP/2\n> Host: api.clickup.com\n> Authorization: {s}"),
         ]))
    add(("asana_pat", "trufflehog asanapersonalaccesstoken (N/16+ digits/16+ digits:32)",
         "2/" + rand(16, string.digits) + "/" + rand(16, string.digits) + ":" + rand(32, HEX), [
             ("env_dump", "+ printenv | grep ASANA\nASANA_ACCESS_TOKEN={s}"),
             ("python_repr", "asana.Configuration(access_token='{s}')"),
         ]))
    add(("ngrok_authtoken", "trufflehog ngrok (2 + 26 + _ + digit + 20)",
         "2" + rand(26, ALNUM) + "_" + rand(1, string.digits) + rand(20, ALNUM), [
             ("cli_arg", "+ ngrok config add-authtoken {s}"),
             ("yaml_print", "version: \"2\"\nauthtoken: {s}\ntunnels:\n  tb:\n    proto: http\n    addr: 6006"),
             ("bare_prose", "ERROR: authentication failed: The authtoken {s} is invalid [ERR_NGROK_107]"),
         ]))
    add(("plaid_access_token", "gitleaks plaid-api-token (access-(sandbox|development|production)- + uuid)",
         "access-production-" + uuid4(), [
             ("json_field", '{"msg":"item linked","access_token":"{s}","item_id":"' + rand(37, ALNUM) + '"}'),
             ("bare_prose", "plaid: ITEM_LOGIN_REQUIRED for {s}"),
         ]))
    add(("telnyx_key", "trufflehog telnyx (KEY + 55)", "KEY0" + rand(31, "0123456789ABCDEF") + "_" + rand(23, ALNUM),
         [("curl_header", "> POST /v2/messages HTTP/1.1\n> Host: api.telnyx.com\n> Authorization: Bearer {s}"),
          ("env_dump", "TELNYX_API_KEY={s}\nTELNYX_FROM=+15550100")]))
    add(("sumologic_access_key", "gitleaks sumologic-access-token (64 with sumo)", rand(64, ALNUM), [
        ("env_dump", "SUMO_ACCESS_ID=su" + rand(12, ALNUM) + "\nSUMO_ACCESS_KEY={s}"),
        ("json_nested", '{"msg":"log shipper","outputs":{"sumo":{"endpoint":"https://api.sumologic.com",'
                        '"accessKey":"{s}"}}}'),
    ]))
    add(("okta_token", "gitleaks okta-access-token (00 + 40 with okta)", "00" + rand(40, URLSAFE), [
        ("yaml_print", "okta:\n  client:\n    orgUrl: https://acme.okta.com\n    token: {s}"),
        ("curl_header", "> GET /api/v1/users?limit=200 HTTP/1.1\n> Host: acme.okta.com\n> Authorization: SSWS {s}"),
    ]))
    add(("gitlab_session_cookie", "gitleaks gitlab-session-cookie (_gitlab_session= + 32)",
         rand(32, HEX), [
             ("set_cookie", "< set-cookie: _gitlab_session={s}; path=/; expires=Fri, 08 May 2026 10:14:22 GMT; "
                            "secure; HttpOnly; SameSite=None"),
             ("cookie_header", "> Cookie: known_sign_in=1; _gitlab_session={s}"),
         ]))
    add(("sidekiq_enterprise_credentials", "gitleaks sidekiq-secret and sidekiq-sensitive-url (8 hex:8 hex)",
         rand(8, HEX) + ":" + rand(8, HEX), [
             ("env_dump", "BUNDLE_ENTERPRISE__CONTRIBSYS__COM={s}\nRAILS_ENV=production"),
             ("bundler_url", "Fetching source index from https://{s}@enterprise.contribsys.com/"),
         ]))
    add(("beamer_token", "gitleaks beamer-api-token (b_ + 44)", "b_" + rand(44, LOWER_DIGITS + "_-"), [
        ("json_field", '{"msg":"changelog push","beamer_api_key":"{s}"}'),
        ("curl_header", "> POST /v0/posts HTTP/1.1\n> Host: api.getbeamer.com\n> Beamer-Api-Key: {s}"),
    ]))
    add(("cloudflare_global_key", "gitleaks cloudflare-global-api-key (37 hex)", rand(37, HEX), [
        ("curl_header", "> GET /client/v4/zones HTTP/2\n> X-Auth-Email: ops@acme.io\n> X-Auth-Key: {s}"),
        ("ini_print", "[cloudflare]\nemail = ops@acme.io\napi_key = {s}"),
        ("env_dump", "CF_API_EMAIL=ops@acme.io\nCLOUDFLARE_API_KEY={s}"),
    ]))
    add(("cohere_key", "gitleaks cohere-api-token (40 with cohere/CO_API_KEY)", rand(40, ALNUM), [
        ("env_dump", "+ export CO_API_KEY={s}"),
        ("python_repr", "INFO rerank: cohere.Client(api_key='{s}', timeout=60)"),
    ]))
    add(("confluent_secret", "gitleaks confluent-secret-key (64 with confluent)", rand(64, LOWER_DIGITS), [
        ("properties_print", "sasl.mechanism=PLAIN\nsasl.jaas.config=org.apache.kafka.common.security.plain."
                             "PlainLoginModule required username=\"" + rand(16, UPPER_DIGITS) + "\" password=\"{s}\";"),
        ("json_field", '{"msg":"schema registry","confluent_cloud_api_secret":"{s}"}'),
    ]))
    add(("mattermost_token", "gitleaks mattermost-access-token (26 with mattermost)", rand(26, LOWER_DIGITS), [
        ("env_dump", "MATTERMOST_URL=https://chat.acme.io\nMATTERMOST_TOKEN={s}"),
        ("cli_arg", "+ mmctl auth login https://chat.acme.io --name acme --access-token {s}"),
    ]))
    add(("rapidapi_key", "gitleaks rapidapi-access-token (50 with rapidapi)", rand(50, LOWER_DIGITS), [
        ("http_header", "send: b'GET /v1/quote HTTP/1.1\\r\\nHost: twelve-data1.p.rapidapi.com\\r\\n"
                        "X-RapidAPI-Key: {s}\\r\\nX-RapidAPI-Host: twelve-data1.p.rapidapi.com\\r\\n\\r\\n'"),
        ("python_dict_repr", "headers={'X-RapidAPI-Key': '{s}', 'X-RapidAPI-Host': 'weather.p.rapidapi.com'}"),
    ]))
    add(("freemius_secret", "gitleaks freemius-secret-key ('secret_key' => 'sk_' + 29)",
         "sk_" + rand(29, ALNUM + "<>;?*~"), [
             ("php_array", "PHP Notice: fs init array(\n  'id' => '4321',\n  'secret_key' => '{s}"
                           "',\n  'public_key' => 'pk_" + rand(29, HEX) + "',\n)"),
         ]))
    add(("stytch_secret", "trufflehog stytch (47 + =, with stytch)", "secret-live-" + rand(35, URLSAFE) + "=", [
        ("env_dump", "STYTCH_PROJECT_ID=project-live-" + uuid4() + "\nSTYTCH_SECRET={s}"),
        ("python_repr", "stytch.Client(project_id='project-live-" + uuid4() + "', secret='{s}')"),
    ]))
    # (the secret is the key's last part: the graph id before it is public, in APOLLO_GRAPH_REF)
    add(("apollo_graph_key", "trufflehog apollo (service:<graph>:22)", rand(22, ALNUM), [
        ("env_dump", "APOLLO_KEY=service:ml-graph:{s}\nAPOLLO_GRAPH_REF=ml-graph@current"),
        ("cli_env_prefix", "+ APOLLO_KEY=service:ml-graph:{s} rover subgraph publish ml-graph@current --name runs "
                           "--schema runs.graphql"),
        ("bare_prose", "rover: error[E005]: the key service:ml-graph:{s} is not valid for graph ml-graph"),
    ]))
    add(("fastly_token", "gitleaks fastly-api-token (32 with fastly)", rand(32, URLSAFE), [
        ("curl_header", "> POST /service/7i6HN3TK9wS159v2gPAZ8A/purge_all HTTP/2\n> Host: api.fastly.com\n"
                        "> Fastly-Key: {s}"),
        ("env_dump", "FASTLY_API_TOKEN={s}\nFASTLY_SERVICE_ID=7i6HN3TK9wS159v2gPAZ8A"),
    ]))
    add(("snyk_token", "gitleaks snyk-api-token (uuid with snyk token)", uuid4(), [
        ("cli_arg", "+ snyk auth {s}"),
        ("yaml_print", "steps:\n  - name: snyk\n    env:\n      SNYK_TOKEN: {s}"),
    ]))
    return f


def _look_alikes() -> list[LookAlike]:
    """(context, source, keep, text): values in the places above that hold no secret."""
    sha40, sha64, uid = rand(40, HEX), rand(64, HEX), uuid4()
    b64_plain = base64.b64encode(b"model: llama-7b\nprecision: bf16\nbatch: 64\n").decode()
    rows = [
        ("git_sha", "git log", sha40, f"commit {sha40}\nAuthor: ml-bot <ml-bot@acme.io>"),
        ("sonar_analysis_sha", "sonar-scanner's scm line", rand(40, HEX),
         "INFO: SCM revision ID '{k}'"),
        ("sonar_project_key", "sonar-scanner's project key", "acme_ml-platform",
         "INFO: Project key: acme_ml-platform"),
        ("sonar_masked_token", "a masked token in a CI log", "sonar.token=***",
         "+ sonar-scanner -Dsonar.projectKey=ml -Dsonar.token=***"),
        ("k8s_uid", "kubectl get -o yaml", uid,
         f"metadata:\n  name: trainer-0\n  uid: {uid}\n  resourceVersion: \"81234\""),
        ("request_id", "an HTTP response header", (rid := uuid4()), f"< x-request-id: {rid}"),
        ("image_digest", "docker pull", sha64, f"Digest: sha256:{sha64}"),
        ("pip_hash", "pip's hash-checking mode", (ph := rand(64, HEX)), f"torch==2.3.0 --hash=sha256:{ph}"),
        ("traceparent", "W3C trace context header", (tp := f"00-{rand(32, HEX)}-{rand(16, HEX)}-01"),
         f"> traceparent: {tp}"),
        ("mlflow_run_id", "mlflow", (mr := rand(32, HEX)), f"INFO mlflow.tracking: run_id={mr} status=FINISHED"),
        ("sentry_event_id", "sentry-sdk", (se := rand(32, HEX)), f"DEBUG sentry_sdk: Sending event, event_id={se}"),
        ("masked_sk", "a client's masked key", "sk_****************************a1b2",
         "elevenlabs: using key sk_****************************a1b2"),
        ("masked_json", "a masked JSON field", "[MASKED]", '{"msg":"client","api_key":"[MASKED]","retries":3}'),
        ("masked_stars", "a masked env value", "********", "CIRCLE_TOKEN=********"),
        ("redacted_word", "a redacted header", "<redacted>", "> X-Octopus-ApiKey: <redacted>"),
        ("truncated_prefix", "a truncated token preview", "phx_Ab12…", "posthog: key phx_Ab12… (personal)"),
        ("base64_plain", "base64 of a config", b64_plain, f"configmap data.config: {b64_plain}"),
        ("t1_micro", "an instance type", "t1.micro", "ec2: launching 2 x t1.micro in us-east-1a"),
        ("ycbcr", "an image colour space", "YCbCr", "PIL: converting image mode YCbCr to RGB"),
        ("api_gateway_name", "an upper-case id with dashes", "API-GATEWAY-PROD-EU-WEST-1",
         "deploy: stage API-GATEWAY-PROD-EU-WEST-1 updated"),
        ("live_reload", "a flag name", "live_reload=true", "dev server: live_reload=true port=8080"),
        ("test_split", "a dataset option", "test_split=validation", "dataset: test_split=validation shuffle=false"),
        ("salesforce_org_id", "a Salesforce org id", "00D5e000000XyZ1EAK",
         "simple_salesforce: org id 00D5e000000XyZ1EAK instance acme"),
        ("plaid_item_id", "a Plaid item id", (pi := rand(37, ALNUM)), f'{{"msg":"item","item_id":"{pi}"}}'),
        ("plaid_request_id", "a Plaid request id", "m8MDnv9okwxFNBV", "plaid: request_id=m8MDnv9okwxFNBV"),
        ("ld_flag_key", "a LaunchDarkly flag key", "api-rate-limit-v2", "ldclient: evaluated flag api-rate-limit-v2"),
        ("sdk_version", "a version header", "sdk-python/9.4.0", "> User-Agent: sdk-python/9.4.0"),
        ("clickup_list_id", "a ClickUp task id", "pk_list=901204", "clickup: sync pk_list=901204 ok"),
        ("ngrok_url", "an ngrok tunnel url", "https://1a2b-34-56-78-90.ngrok-free.app",
         "t=2026-05-01T10:14:22+0000 lvl=info msg=\"started tunnel\" url=https://1a2b-34-56-78-90.ngrok-free.app"),
        ("kms_arn", "a KMS key ARN", (arn := f"arn:aws:kms:us-east-1:123456789012:key/{uuid4()}"),
         f"kms_key_id: {arn}"),
        ("secret_ref", "a secret manager reference", "projects/ml/secrets/hf-token/versions/3",
         "loading secret projects/ml/secrets/hf-token/versions/3"),
        ("gpg_fingerprint", "gpg --import", "4AA4767BBC9C4B1D", "gpg: key 4AA4767BBC9C4B1D: public key imported"),
        ("ssh_fingerprint", "ssh -v", (fp := "SHA256:" + rand(43, ALNUM + "+/")),
         f"debug1: Server host key: ssh-ed25519 {fp}"),
        ("etag", "an S3 ETag", (et := rand(32, HEX)), f'< ETag: "{et}"'),
        ("gitlab_csrf_name", "a cookie name with no value", "_gitlab_session=; path=/",
         "< set-cookie: _gitlab_session=; path=/; max-age=0"),
        ("wandb_run_id", "wandb", (wr := rand(8, LOWER_DIGITS)), f"wandb: Syncing run {wr} to https://wandb.ai/acme"),
        ("job_uuid", "a scheduler job id", (ju := uuid4()), f'{{"job_id":"{ju}","state":"RUNNING"}}'),
        ("token_count", "a token count", "max_new_tokens=512", "generate: max_new_tokens=512 temperature=0.7"),
        ("tokenizer_path", "a tokenizer path", "/models/tok-32k/tokenizer.json",
         "loading tokenizer from /models/tok-32k/tokenizer.json"),
        ("auth_method", "an auth method word", "auth_method: oauth2",
         "connector:\n  auth_method: oauth2\n  timeout: 30"),
        ("key_id_public", "a public key id", "key_id=2a6f31c9", "jwks: selected key_id=2a6f31c9 alg=RS256"),
        ("sumo_collector", "a Sumo Logic collector name", "collector-gpu-a100-17",
         "sumo: collector-gpu-a100-17 registered"),
        ("confluent_cluster", "a Confluent cluster id", "lkc-9x2m7q",
         "bootstrap pkc-4r297.us-west2.gcp: cluster lkc-9x2m7q"),
        ("cloudflare_zone_id", "a Cloudflare zone id in a URL", (cz := rand(32, HEX)),
         f"> GET /client/v4/zones/{cz}/dns_records HTTP/2"),
        ("octopus_space", "an Octopus space id", "Spaces-1", "octo: using space Spaces-1"),
        ("hubspot_portal", "a HubSpot portal id", "portalId=26480412",
         "hubspot: portalId=26480412 synced 120 contacts"),
        ("snyk_org", "a Snyk org id", (so := uuid4()), f"snyk: testing org {so} project trainer"),
        ("stripe_publishable", "a publishable key (public by design)", (pk := "pk_test_" + rand(24, ALNUM)),
         f"checkout: Stripe.js loaded with publishable key {pk}"),
        ("container_id", "a container id", (cid := rand(64, HEX)), f"containerd: started container {cid}"),
        ("ami_id", "an AMI id", "ami-0c55b159cbfafe1f0", "launching ami-0c55b159cbfafe1f0 on p4d.24xlarge"),
        ("azure_tenant", "an Azure tenant id", (at := uuid4()), f"az: logged in to tenant {at}"),
        ("model_sha", "a Hugging Face revision", (mrv := rand(40, HEX)),
         f"Downloading model meta-llama/Llama-2-7b revision={mrv}"),
    ]
    out = []
    for ctx, src, keep, text in rows:
        out.append((ctx, src, keep, text.replace("{k}", keep)))
    return out


def rows() -> list[dict[str, str]]:
    _draws.reset()
    return case_rows(_formats()) + keep_rows(_look_alikes())


def write(path: Path) -> int:
    return write_rows(path, rows())
