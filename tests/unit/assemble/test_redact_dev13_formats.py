"""Credentials in the vendor formats of the fourteenth probe round (dev13), from gitleaks' rules and trufflehog's
detectors: prefixes a token names itself by (SonarQube, Deno Deploy, Netlify, CircleCI, Contentful, Bitbucket, PostHog,
Octopus, HubSpot, ClickUp, LaunchDarkly, Plaid, Square, Lob, GoCardless, Dropbox, ElevenLabs, Yandex Cloud, 42 intra,
Authress), the punctuation of its parts (Salesforce's session id, Apollo's graph key, Asana's and ngrok's tokens),
Sidekiq's gem-server credentials and `snyk auth`'s argument; each found by its shape alone, away from any key that
names it; and what those shapes' neighbours hold that must stay."""

from __future__ import annotations

import pytest

from streams.assemble.redact import Redactor

SONAR = "sqa_cc6577428c2f6d6bc64e5a22fac180d6b2e6e1b4"
SONARCLOUD = "sqco_n86TkVYCM7l8GQlchbkER0Af7BOfjtNayviHzm5YdOnCqIz0Wiw8SE7diV3"
DENO = "ddw_TMXVjM8AhghjsllAj7n4JuXFZo2qh20xlReG"
NETLIFY = "nfp_saL1dvnyzv0ZzyA0xIfl4c7xU2zXCot2PoPU"
CIRCLE = "CCIPAT_tg3SUunWZTRTpysCW9f4CA_829af48d9d59ce6ca6b0b9658d7dbc036095e68d"
CONTENTFUL = "CFPAT-7KzcnNjeh1MVLymYZwH6Qqq5X1wUGAJ7Wx98vjE6boQ"
BITBUCKET = "ATBBYFevPUaKRIrOaLuAqkiL6dzcdvGoJWsk"
POSTHOG = "phx_1CdSXAoZmhFkrrQxeJ6mXJlSwP90IfVRhUi0ijIfcWG"
OCTOPUS = "API-YKWOKVDV1MTLHJ57AOYGP2FKK2"
HUBSPOT = "pat-eu1-b8a1c095-4099-93fd-21b5-aaa1c87409cd"
CLICKUP = "pk_83286033_QKG1ABMILTDQL1JAC6Z2EKOV1I4FX6KO"
LAUNCHDARKLY = "api-f63d654f-7585-4277-97dc-278aaf6301d1"
PLAID = "access-sandbox-a6195880-96b3-5bc4-986e-10b742c0bac7"
APOLLO = "IjXebblnovNqW8ePaBhQBf"
NGROK = "2S2UxFBJ4yXJ5PquTwZhrHpe7co_7ruNgr4tNNpnCQCHbMVqe"
ASANA = "1/6104776583981463:28efa20124d6d003a6630d95495d395d"
SQUARE = "EAAAXmjIMGuJpeiG8YqL9BN5GGx6KtyQqDTjD3saRZkb2l26nkaylEMyosHNwylo"
SQUARE_SANDBOX = "sandbox-sq0csb-PdBMZQf4G9SBSqfPDA28uSwNccStq3fiOLUwQmLeR2z"
LOB = "test_5152fcdcbc836b42830bca7398d44490847"
GOCARDLESS = "live_0qHM3XlSd_D9i-MEeq6iTqTfibBb5z6-aBfCt3xq"
SALESFORCE = ("00D36ZJDs1MbX1U!eMheFYV_rKSteQVz1HwG9kX0HM9awdGDwcuCMGPYTZuHVvat77J9OwPsgZt7BpYQ2OQBilCFXuF0DRkxhhl8WBH4"
              "Rax23OJv")
DROPBOX = ("sl.s9Vr947x6_M57m9e6ypS_bW3Ohzqp2aoqyrCGcShfzeyCABax7H8TUSRFLc5nvfBZKVRx8QM9-b8dGlQnd2VawVTURIOHXvD"
           "Nkl9jkzoSXPCFgqGYvaROyWI-wvchteNT8shrKTHFO")
ELEVENLABS = "sk_7178d32506afcb476de8d6e7916ae6315168d02250723222"
YANDEX_KEY = "AQVNcIVVw4Xg2x8z7PjTwNNfBzfOE7oI1Bpeu9pxz"
YANDEX_STATIC = "YCqv2jHkEAc46IG4q7S9FnriivEq1LcKXxUgjzGU"
YANDEX_IAM = ("t1.9euelZqqt9S7vRVFAJJCn9q8JG6wBMd6JcUbWqIlrXxVytd.n9n3NZ_ak6VFSPndpuFKAD9fNBW7GhwAlkWx3sA2MnkiQ_"
              "sDjiZFL8zQ3Pv5rDs079GVWSjfB_c42hBl409cyC")
INTRA42 = "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"
AUTHRESS = "sc_7jzooqijbqrw.4my2t.acc-g75dxoiuaai16av7.3WVDiSvsneTZePLGsjFgKmk3nMm7CtrUnPH3jB_xSI_pbufiDS5BX5wz-RN5"
SIDEKIQ = "301ac879:92412aa6"
SNYK = "57d56110-a0de-48b6-97d7-873a10221c57"


@pytest.fixture(scope="module", params=[True, False], ids=["hyperscan", "substring"])
def redact(request: pytest.FixtureRequest) -> Redactor:
    return Redactor(prefer_hyperscan=request.param)


@pytest.mark.parametrize(("text", "secret", "kind"), [
    (f"ci: uploading report with {SONAR} (analysis AY12)", SONAR, "ci_service_token"),
    (f"ERROR: Not authorized. Token {SONARCLOUD} is not valid", SONARCLOUD, "ci_service_token"),
    (f"error: The token {DENO} does not have access to project eval", DENO, "ci_service_token"),
    (f"Netlify API error: {NETLIFY} unauthorized", NETLIFY, "ci_service_token"),
    (f"circleci: trigger refused, {CIRCLE} is revoked", CIRCLE, "ci_service_token"),
    (f"+ contentful space export --space-id 7x2k9m --management-token {CONTENTFUL}", CONTENTFUL, "ci_service_token"),
    (f"fatal: unable to access 'https://ml-bot:{BITBUCKET}@bitbucket.org/acme/t.git/'", BITBUCKET, "ci_service_token"),
    (f"posthog: request failed for {POSTHOG}: 403", POSTHOG, "ci_service_token"),
    (f"Octopus: the API key {OCTOPUS} you provided was not valid", OCTOPUS, "ci_service_token"),
    (f"hubspot sync: {HUBSPOT} lacks scope crm.objects.contacts.read", HUBSPOT, "saas_app_token"),
    (f"> Authorization: {CLICKUP}", CLICKUP, "saas_app_token"),
    (f"launchdarkly: {LAUNCHDARKLY} has role reader", LAUNCHDARKLY, "saas_app_token"),
    (f"plaid: ITEM_LOGIN_REQUIRED for {PLAID}", PLAID, "saas_app_token"),
    (f"rover: error[E005]: the key service:ml-graph:{APOLLO} is not valid", APOLLO, "saas_app_token"),
    (f"ERROR: authentication failed: The authtoken {NGROK} is invalid", NGROK, "saas_app_token"),
    (f"asana.Configuration(access_token='{ASANA}')", ASANA, "saas_app_token"),
    (f"square: UNAUTHORIZED for {SQUARE}", SQUARE, "payment_token"),
    (f"oauth: code exchange with {SQUARE_SANDBOX} returned 401", SQUARE_SANDBOX, "payment_token"),
    (f"POST https://{LOB}:@api.lob.com/v1/letters -> 401", LOB, "payment_token"),
    (f"gocardless_pro.Client('{GOCARDLESS}', environment='live')", GOCARDLESS, "payment_token"),
    (f"simple_salesforce: INVALID_SESSION_ID for {SALESFORCE}", SALESFORCE, "vendor_access_token"),
    (f"dropbox: expired {DROPBOX}", DROPBOX, "vendor_access_token"),
    (f"tts: 401 from voice synth for {ELEVENLABS}, falling back", ELEVENLABS, "vendor_access_token"),
    (f"yc: {YANDEX_KEY} is not allowed for folder b1g0abc", YANDEX_KEY, "yandex_cloud_key"),
    (f"s3: SignatureDoesNotMatch for {YANDEX_STATIC}", YANDEX_STATIC, "yandex_cloud_key"),
    (f"$ yc iam create-token\n{YANDEX_IAM}", YANDEX_IAM, "yandex_cloud_key"),
    (f"oauth: exchange failed with {INTRA42}", INTRA42, "oauth_client_secret"),
    (f"authress: {AUTHRESS} was revoked", AUTHRESS, "oauth_client_secret"),
    (f"BUNDLE_ENTERPRISE__CONTRIBSYS__COM={SIDEKIQ}", SIDEKIQ, "sidekiq_credentials"),
    (f"Fetching source index from https://{SIDEKIQ}@enterprise.contribsys.com/", SIDEKIQ, "sidekiq_credentials"),
    (f"+ snyk auth {SNYK}", SNYK, "cli_secret_argument"),
])
def test_credentials_in_dev13_formats_are_redacted(redact: Redactor, text: str, secret: str, kind: str) -> None:
    out = redact(text)
    assert secret not in out and f"[REDACTED:{kind}]" in out, out


@pytest.mark.parametrize("line", [
    "ec2: launching 2 x t1.micro in us-east-1a", "PIL: converting image mode YCbCr to RGB",
    "deploy: stage API-GATEWAY-PROD-EU-WEST-1 updated", "ldclient: evaluated flag api-rate-limit-v2",
    "dev server: live_reload=true port=8080", "dataset: test_split=validation shuffle=false",
    "simple_salesforce: org id 00D5e000000XyZ1EAK instance acme", "clickup: sync pk_list=901204 ok",
    "elevenlabs: using key sk_****************************a1b2", "posthog: key phx_Ab12… (personal)",
    "> X-Octopus-ApiKey: <redacted>", "snyk: testing org 8c1f0e2a-3b4d-4e5f-9a6b-7c8d9e0f1a2b project trainer",
    "< set-cookie: _gitlab_session=; path=/; max-age=0",
    "checkout: Stripe.js loaded with publishable key pk_test_51HxYzAbCdEfGhIjKlMnOpQr",
    "+ snyk auth", "sidekiq: gems at https://enterprise.contribsys.com/ (credentials from bundler)",
    "commit 4f9d2c1ab8e7f6d5c4b3a2918f7e6d5c4b3a2918\nAuthor: ml-bot <ml-bot@acme.io>",
])
def test_what_the_dev13_formats_neighbours_hold_stays(redact: Redactor, line: str) -> None:
    assert redact(line) == line
