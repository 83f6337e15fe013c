"""The dev15 round of the secrets probe: credentials as GPU-cluster jobs print them, in the places earlier rounds left.

Each case names the program that prints it and a URL of its documentation or code. Values are drawn from a seeded
random generator in the published shape, so none is a real credential. The places are those a training job's log
carries: reprs of dataclasses, pydantic models and argparse namespaces (custom training scripts' arguments, DeepSpeed's
config print with its monitor configs, vLLM's non-default args with its list-valued api_key), auth tuples in kwargs
reprs (requests, elasticsearch-py), env dumps of launchers and schedulers with unusual variable names (``*_PASS``,
``*_PWD``, ``*_CREDENTIALS``, ``*_AUTH``, ``*_SIGNING_KEY``, a passphrase with spaces), container launch lines
(docker, apptainer, enroot, mpirun -x), ``curl -u``, git and pip URLs with credentials (one percent-encoded, as a
password with ``@`` must be), Airflow's connection URIs, header lists (Node's rawHeaders, grpc metadata tuples,
Kubernetes' websocket bearer protocol), GCP service-account JSON inside JSON strings escaped once and twice, base64
blobs of kubeconfigs and env files, double percent-encoded signatures, and a token a Rich log handler wrapped onto
the next line. ``_look_alikes`` are values of the same places that hold no secret (LLM token counts and tokenizer
tokens, hashes, run and experiment ids, commit SHAs, NCCL/UCX settings, printers' masks) and must come out as written.

    python -m devtools.secret_probe generate dev15    # writes tests/fixtures/secret_probe/dev15.jsonl only
"""

from __future__ import annotations

import base64
import json
from pathlib import Path
from urllib.parse import quote

from devtools.secret_probe_draws import Case, Draws, LookAlike, case_rows, keep_rows, write_rows
from devtools.secret_probe_kinds import ALNUM, B64, HEX, LOWER_DIGITS, UPPER_DIGITS, URLSAFE, b64url

PUNCT = "!@#$%^&*/+=?"

_draws = Draws(15015)
rand, uuid4 = _draws.rand, _draws.uuid4
_TS = "2026-05-02 08:41:09,117"
_ISO = "2026-05-02T08:41:09.117Z"

ARGPARSE = "https://docs.python.org/3/library/argparse.html#argparse.Namespace"
DATACLASSES = "https://docs.python.org/3/library/dataclasses.html"
ENV = "https://man7.org/linux/man-pages/man1/env.1.html"
CURL = "https://curl.se/docs/manpage.html#-u"
PIP = "https://pip.pypa.io/en/stable/topics/authentication/"
GCP_SA = "https://cloud.google.com/iam/docs/keys-create-delete#creating"


def password(n: int = 20) -> str:
    """A password with punctuation in it, as password managers make them."""
    while True:
        s = rand(n, ALNUM + PUNCT)
        if any(c in PUNCT for c in s):
            return s


def at_password() -> str:
    """A password with an '@' and a '/' in it, which a URL's userinfo must percent-encode."""
    return rand(11) + "@" + rand(10) + "/" + rand(9)


def b64(s: str) -> str:
    return base64.b64encode(s.encode()).decode()


def jwt() -> str:
    head = b64url(json.dumps({"alg": "RS256", "kid": rand(20, URLSAFE)}).encode())
    body = b64url(json.dumps({"iss": "kubernetes/serviceaccount", "sub": "system:serviceaccount:ml:trainer",
                              "exp": 1893456000}).encode())
    return f"{head}.{body}.{rand(342, URLSAFE)}"


def pem_body(lines: int = 5) -> list[str]:
    return [rand(64, B64) for _ in range(lines)] + [rand(28, B64) + "=="]


def _reprs() -> list[Case]:
    f: list[Case] = []
    add = f.append
    key = rand(40, HEX)
    add(("dataclass_args_repr", "a training script's HfArgumentParser dataclass printed whole (trl's ScriptArguments; "
         "https://github.com/huggingface/trl/blob/main/trl/scripts/utils.py; " + DATACLASSES + ")", key, [
        ("script_arguments", _TS + " - INFO - __main__ - Script parameters ScriptArguments(dataset_name='acme/sft-mix',"
                             " dataset_train_split='train', wandb_key='{s}', log_with='wandb', gradient_checkpointing="
                             "True)"),
    ]))
    tok = rand(40, ALNUM)
    add(("pydantic_plain_str", "a pydantic-settings model whose key is typed str, not SecretStr, printed by repr "
         "(https://docs.pydantic.dev/latest/concepts/pydantic_settings/)", tok, [
        ("pydantic_settings_repr", "INFO:     settings loaded: Settings(app_name='inference-gw', "
                                   "upstream_url='http://vllm:8000/v1', upstream_auth_token='{s}', timeout_s=600)"),
    ]))
    key = rand(25, ALNUM)
    add(("deepspeed_monitor_config", "DeepSpeed's config print of its monitor configs (pydantic reprs; "
         "https://github.com/microsoft/DeepSpeed/blob/master/deepspeed/monitor/config.py, "
         "deepspeed/runtime/config.py print())", key, [
        ("deepspeed_comet_repr", "[2026-05-02 08:41:09,117] [INFO] [config.py:1003:print]   monitor_config "
                                 "............... tensorboard=TensorBoardConfig(enabled=False, output_path='', "
                                 "job_name='DeepSpeedJobName') comet=CometConfig(enabled=True, "
                                 "samples_log_interval=100, project='llm', workspace='acme', api_key='{s}', "
                                 "experiment_name=None, "
                                 "experiment_key=None, online=None, mode=None) wandb=WandbConfig(enabled=False, "
                                 "group=None, team=None, project='deepspeed') csv_monitor=CSVConfig(enabled=False, "
                                 "output_path='', job_name='DeepSpeedJobName') enabled=True"),
    ]))
    key = rand(32, ALNUM)
    add(("vllm_api_key_list", "vLLM's OpenAI server logs its non-default args; --api-key is a list there "
         "(https://github.com/vllm-project/vllm/blob/main/vllm/entrypoints/openai/cli_args.py)", key, [
        ("vllm_non_default_args", "INFO 05-02 08:41:09 [api_server.py:1896] vLLM API server version 0.10.1\n"
                                  "INFO 05-02 08:41:09 [utils.py:326] non-default args: {'model_tag': "
                                  "'meta-llama/Llama-3.1-8B-Instruct', 'api_key': ['{s}'], 'model': "
                                  "'meta-llama/Llama-3.1-8B-Instruct', 'max_model_len': 8192}"),
    ]))
    pw = rand(20, ALNUM)
    add(("auth_tuple_kwargs", "requests' and elasticsearch-py's auth tuple in a kwargs dict repr "
         "(https://requests.readthedocs.io/en/latest/user/authentication/; "
         "https://elasticsearch-py.readthedocs.io/en/stable/api/elasticsearch.html)", pw, [
        ("requests_auth_tuple", _TS + " DEBUG upload: request kwargs {'url': 'https://artifacts.acme.io/upload', "
                                "'auth': ('ml-bot', '{s}'), 'timeout': 30}"),
        ("es_basic_auth_tuple", _TS + " INFO es: Elasticsearch(hosts=['https://es.internal:9200'], "
                                "basic_auth=('elastic', '{s}'), verify_certs=False)"),
    ]))
    key = rand(40, ALNUM)
    add(("namespace_unusual_key", "argparse Namespace of a training script with a tracker secret under an unusual "
         "name (" + ARGPARSE + ")", key, [
        ("namespace_api_secret", "Namespace(model='llama-3-8b', lr=0.0002, tracker='clearml', "
                                 "clearml_api_secret='{s}', seed=42)"),
        ("namespace_signing_key", "args: Namespace(port=8080, model_dir='/models', artifact_signing_key='{s}', "
                                  "workers=4)"),
    ]))
    pw = password(18)
    add(("sys_argv_list", "sys.argv logged at start (a list repr; the flag and its value separate items) "
         "(https://docs.python.org/3/library/sys.html#sys.argv)", pw, [
        ("argv_list_password", "[rank0]: argv: ['train.py', '--db-host', 'pg.internal', '--db-password', '{s}', "
                               "'--epochs', '3']"),
        ("sagemaker_user_args", "SM_USER_ARGS=[\"--db-password\",\"{s}\",\"--epochs\",\"3\"]"),
    ]))
    return f


def _env_dumps() -> list[Case]:
    f: list[Case] = []
    add = f.append
    pw = rand(16, ALNUM)
    add(("env_pass_suffix", "env(1) inside a Slurm batch job, a *_PASS variable (" + ENV + ")", pw, [
        ("env_ldap_bind_pass", "SLURM_JOB_ID=481516\nSLURM_NNODES=4\nLDAP_BIND_PASS={s}\nMASTER_PORT=29500"),
    ]))
    pw = password(14)
    add(("env_pwd_suffix", "printenv of a *_PWD variable beside the shell's PWD (" + ENV + ")", pw, [
        ("env_minio_pwd", "PWD=/workspace\nMINIO_ROOT_PWD={s}\nHOME=/root"),
    ]))
    phrase = " ".join(w + str(_draws.rng.randint(10, 99)) for w in
                      _draws.rng.sample(["lighthouse", "marmalade", "trampoline", "velocity", "orchestra",
                                         "porcupine", "quicksilver", "saxophone"], 4))
    add(("env_passphrase_spaces", "env(1) prints a value to the end of its line: a passphrase with spaces "
         "(Bitwarden's passphrase generator; " + ENV + ")", phrase, [
        ("env_smtp_password_spaces", "SMTP_USER=alerts@acme.io\nSMTP_PASSWORD=" + phrase + "\nSMTP_PORT=587"),
        ("env_gpg_passphrase_spaces", "+ env\nGPG_PASSPHRASE=" + phrase + "\nGNUPGHOME=/root/.gnupg"),
    ]))
    cred = rand(24, ALNUM)
    add(("env_auth_suffix", "a *_AUTH variable holding user:password (Ray's dashboard behind nginx, htpasswd-style; "
         + ENV + ")", cred, [
        ("env_proxy_auth", "RAY_ADDRESS=http://ray-head:8265\nDASHBOARD_PROXY_AUTH=admin:{s}\nRAY_USAGE_STATS_ENABLED=0"),
    ]))
    key = b64url(bytes(_draws.rng.getrandbits(8) for _ in range(32)))
    add(("env_signing_key", "a *_SIGNING_KEY and Airflow's fernet key in an env dump "
         "(https://airflow.apache.org/docs/apache-airflow/stable/security/secrets/fernet.html)", key, [
        ("env_jwt_signing_key", "MLFLOW_AUTH_JWT_SIGNING_KEY={s}\nMLFLOW_TRACKING_URI=http://mlflow:5000"),
        ("env_fernet_key", "AIRFLOW__CORE__EXECUTOR=CeleryExecutor\nAIRFLOW__CORE__FERNET_KEY={s}"),
    ]))
    sa_key = rand(40, HEX)
    body = pem_body(3)
    sa_json = json.dumps({"type": "service_account", "project_id": "acme-ml", "private_key_id": sa_key,
                          "private_key": "-----BEGIN PRIVATE KEY-----\n" + "\n".join(body)
                                         + "\n-----END PRIVATE KEY-----\n",
                          "client_email": "trainer@acme-ml.iam.gserviceaccount.com"})
    add(("env_credentials_json", "a *_CREDENTIALS variable holding a service-account JSON in an env dump "
         "(" + GCP_SA + ")", body[1], [
        ("env_gcp_credentials_json", "GCP_CREDENTIALS=" + sa_json + "\nGOOGLE_CLOUD_PROJECT=acme-ml"),
    ]))
    pw = rand(18, ALNUM)
    add(("env_passcode", "a passcode and a PIN variable (RSA SecurID-style MFA passcode for a VPN login script; "
         + ENV + ")", pw, [
        ("env_vpn_passcode", "VPN_USER=ml-bot\nVPN_PASSCODE={s}\nVPN_GATEWAY=vpn.acme.io"),
    ]))
    key = "nvapi-" + rand(64, URLSAFE)
    add(("launcher_env_flags", "container launch lines that pass env vars (docker run -e, apptainer --env, "
         "enroot --env, mpirun -x; https://docs.docker.com/reference/cli/docker/container/run/#env, "
         "https://apptainer.org/docs/user/main/environment_and_metadata.html, "
         "https://docs.open-mpi.org/en/v5.0.x/man-openmpi/man1/mpirun.1.html)", key, [
        ("docker_run_env", "+ docker run --gpus all --rm -e NGC_API_KEY={s} -v /data:/data nvcr.io/nim/llama:1.2"),
        ("apptainer_env", "+ apptainer exec --nv --env \"NGC_CLI_API_KEY={s}\" llm.sif python serve.py"),
        ("mpirun_x", "+ mpirun -np 16 -x NCCL_DEBUG=INFO -x NGC_API_KEY={s} -x LD_LIBRARY_PATH python train.py"),
    ]))
    pw = rand(22, ALNUM)
    add(("enroot_env_unusual", "enroot start --env with a *_PASS variable "
         "(https://github.com/NVIDIA/enroot/blob/master/doc/cmd/start.md)", pw, [
        ("enroot_env_pass", "+ enroot start --rw --env REGISTRY_PASS={s} --mount /data:/data pytorch python train.py"),
    ]))
    return f


def _urls_and_clis() -> list[Case]:
    f: list[Case] = []
    add = f.append
    pw = rand(20, ALNUM)
    add(("curl_user", "curl -u user:password and combined short flags (" + CURL + ")", pw, [
        ("curl_u", "+ curl -u admin:{s} https://registry.internal/v2/_catalog"),
        ("curl_fsSL_u", "+ curl -fsSLu ml-bot:{s} -o model.tar https://artifacts.acme.io/models/llm.tar"),
        ("curl_user_long", "+ curl --user 'ml-bot:{s}' --upload-file ckpt.pt https://nexus.acme.io/repo/ckpt.pt"),
    ]))
    tok = rand(40, ALNUM)
    add(("git_url_userinfo", "git clone with a token in the URL, git's error and git remote -v "
         "(https://git-scm.com/docs/git-clone#_git_urls)", tok, [
        ("git_clone_token", "+ git clone https://ml-bot:{s}@git.acme.io/ml/llm-train.git /workspace/src"),
        ("git_remote_v", "origin\thttps://ml-bot:{s}@git.acme.io/ml/llm-train.git (fetch)\n"
                         "origin\thttps://ml-bot:{s}@git.acme.io/ml/llm-train.git (push)"),
    ]))
    pw = at_password()
    add(("url_percent_encoded_password", "a password with '@' and '/' percent-encoded in a URL's userinfo "
         "(RFC 3986 3.2.1; pip and SQLAlchemy require it: " + PIP + ")", pw, [
        ("pip_index_url_encoded", "+ pip install --index-url https://ml-bot:" + quote(pw, safe="")
                                  + "@pypi.acme.io/simple llm-utils==0.4.1"),
        ("sqlalchemy_url_encoded", _TS + " INFO db: connecting to postgresql+psycopg2://trainer:"
                                   + quote(pw, safe="") + "@pg.internal:5432/runs"),
    ]))
    sec = rand(40, B64)
    add(("airflow_conn_uri", "Airflow's connection URI env var, its secret percent-encoded "
         "(https://airflow.apache.org/docs/apache-airflow/stable/howto/connection.html#uri-format)", sec, [
        ("airflow_conn_aws", "AIRFLOW_CONN_S3_CKPT=aws://AKIA" + rand(16, UPPER_DIGITS) + ":" + quote(sec, safe="")
                             + "@/?region_name=us-east-1"),
    ]))
    pw = rand(20, ALNUM)
    add(("uv_index_env", "uv's and poetry's per-index credential variables "
         "(https://docs.astral.sh/uv/configuration/indexes/#providing-credentials-directly, "
         "https://python-poetry.org/docs/repositories/#configuring-credentials)", pw, [
        ("uv_index_password", "UV_INDEX_ACME_USERNAME=ml-bot\nUV_INDEX_ACME_PASSWORD={s}"),
        ("poetry_http_basic", "POETRY_HTTP_BASIC_ACME_USERNAME=ml-bot\nPOETRY_HTTP_BASIC_ACME_PASSWORD={s}"),
    ]))
    key = "nvapi-" + rand(64, URLSAFE)
    add(("ngc_docker_login", "docker login to NGC with the literal $oauthtoken user "
         "(https://docs.nvidia.com/ngc/gpu-cloud/ngc-user-guide/index.html#accessing-ngc-registry)", key, [
        ("ngc_login_p", "+ docker login nvcr.io -u '$oauthtoken' -p {s}"),
    ]))
    return f


def _headers_and_json() -> list[Case]:
    f: list[Case] = []
    add = f.append
    key = rand(40, ALNUM)
    add(("node_raw_headers", "Node's IncomingMessage.rawHeaders, a flat list of names and values, as util.inspect "
         "prints it (https://nodejs.org/api/http.html#messagerawheaders)", key, [
        ("raw_headers_inspect", "rawHeaders: [ 'Host', 'api.acme.io', 'X-Api-Key', '{s}', 'Accept', '*/*' ]"),
    ]))
    key = rand(32, HEX)
    add(("grpc_metadata_tuples", "Python grpc call metadata, a tuple of (key, value) pairs "
         "(https://grpc.github.io/grpc/python/glossary.html#term-metadata)", key, [
        ("grpc_py_metadata", _TS + " DEBUG client: calling Predict with metadata=(('x-request-id', 'r-1'), "
                             "('x-goog-api-key', '{s}'))"),
        ("apim_header_json", '{"level":"debug","msg":"upstream","headers":{"Ocp-Apim-Subscription-Key":"{s}",'
                             '"Content-Type":"application/json"}}'),
    ]))
    tok = jwt()
    proto = "base64url.bearer.authorization.k8s.io." + b64url(tok.encode())
    add(("k8s_websocket_bearer", "Kubernetes' websocket exec/port-forward carries the bearer token in "
         "Sec-WebSocket-Protocol, base64url-encoded (https://github.com/kubernetes/kubernetes/blob/master/"
         "staging/src/k8s.io/apiserver/pkg/authentication/request/websocket/protocol.go)",
         proto.rsplit(".", 1)[1], [
        ("kubectl_v8_websocket", "I0502 08:41:09.117  7 round_trippers.go:473]     Sec-WebSocket-Protocol: "
                                 + proto + ",v4.channel.k8s.io"),
    ]))
    body = pem_body(4)
    sa = json.dumps({"type": "service_account", "private_key_id": rand(40, HEX),
                     "private_key": "-----BEGIN PRIVATE KEY-----\n" + "\n".join(body) + "\n-----END PRIVATE KEY-----\n",
                     "client_email": "sa@acme-ml.iam.gserviceaccount.com"})
    once = json.dumps({"level": "info", "msg": "loaded credentials", "credentials": sa})
    twice = json.dumps({"log": once + "\n", "stream": "stdout", "time": _ISO})
    add(("gcp_sa_json_in_json", "a GCP service-account key JSON held as a string in a JSON record, and that record "
         "inside Docker's json-file line (" + GCP_SA + "; https://docs.docker.com/engine/logging/drivers/json-file/)",
         body[2], [
        ("sa_json_escaped_once", once),
        ("sa_json_escaped_twice", twice),
    ]))
    kc = ("apiVersion: v1\nkind: Config\nclusters:\n- cluster:\n    server: https://k8s.acme.io:6443\n  name: ml\n"
          "users:\n- name: ci\n  user:\n    token: " + rand(48, ALNUM) + "\n")
    kc_b64 = b64(kc)
    add(("b64_kubeconfig", "a base64 kubeconfig in KUBE_CONFIG_DATA, printed by a CI job's env dump "
         "(https://github.com/marketplace/actions/kubernetes-action)", kc_b64, [
        ("kube_config_data_env", "KUBE_CONFIG_DATA=" + kc_b64 + "\nKUBE_NAMESPACE=ml"),
    ]))
    envfile = b64("HF_TOKEN=hf_" + rand(34, ALNUM) + "\nWANDB_API_KEY=" + rand(40, HEX) + "\n")
    add(("b64_env_file", "an env file shipped base64 in a job's environment and echoed "
         "(a Kubernetes Job's ENV_FILE_B64 decoded by its entrypoint)", envfile, [
        ("env_file_b64_echo", "+ echo " + envfile + "\n+ base64 -d"),
        ("env_file_b64_var", "DOTENV_B64=" + envfile),
    ]))
    sig = rand(64, HEX)
    inner = ("https://ckpt.s3.amazonaws.com/llm/step-1200.pt?X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=AKIA"
             + rand(16, UPPER_DIGITS) + "%2F20260502%2Fus-east-1%2Fs3%2Faws4_request&X-Amz-Date=20260502T084109Z"
             "&X-Amz-Expires=3600&X-Amz-SignedHeaders=host&X-Amz-Signature=" + sig)
    add(("double_percent_encoded", "a presigned URL inside another URL's query, its own query encoded twice "
         "(a redirect through a download proxy; https://docs.aws.amazon.com/AmazonS3/latest/userguide/"
         "using-presigned-url.html)", sig, [
        ("proxy_redirect_double", '10.0.3.7 - - [02/May/2026:08:41:09 +0000] "GET /dl?next='
                                  + quote(quote(inner, safe=""), safe="") + ' HTTP/1.1" 302 0'),
    ]))
    tok = rand(64, URLSAFE)
    add(("rich_wrapped_token", "Rich's log handler wraps a long message at its column and moves a long word to the "
         "next line (https://rich.readthedocs.io/en/stable/logging.html)", tok, [
        ("rich_handler_wrap", "[05/02/26 08:41:09] INFO     request headers: {'Authorization': 'Bearer       "
                              "client.py:88\n                             {s}'}"),
        ("rich_handler_wrap_key", "[05/02/26 08:41:09] DEBUG    tracker settings: api_key=                     "
                                  "tracker.py:41\n                             {s}"),
    ]))
    return f


def _look_alikes() -> list[LookAlike]:
    """(context, source, keep, text): values in the places above that hold no secret."""
    sha40, sha64, run = rand(40, HEX), rand(64, HEX), rand(32, HEX)
    exp = rand(32, HEX)
    return [
        ("tokens_too_long", "transformers' tokenizer warning on token counts", "(5123 > 4096)",
         "Token indices sequence length is longer than the specified maximum sequence length for this model "
         "(5123 > 4096). Running this sequence through the model will result in indexing errors"),
        ("max_tokens_kw", "an OpenAI client call's kwargs", "'max_tokens': 4096",
         "DEBUG openai._base_client: Request options: {'method': 'post', 'url': '/chat/completions', "
         "'json_data': {'model': 'llama-3', 'max_tokens': 4096}}"),
        ("pad_token_warning", "transformers' generate warning", "Setting `pad_token_id` to `eos_token_id`:128001",
         "Setting `pad_token_id` to `eos_token_id`:128001 for open-end generation."),
        ("special_tokens_repr", "a tokenizer repr", "'pad_token': '<|finetune_right_pad_id|>'",
         "PreTrainedTokenizerFast(name_or_path='meta-llama/Llama-3.1-8B', vocab_size=128000, "
         "special_tokens={'bos_token': '<|begin_of_text|>', 'eos_token': '<|eot_id|>', "
         "'pad_token': '<|finetune_right_pad_id|>'})"),
        ("eos_token_yaml", "a tokenizer config in YAML", "eos_token: <|im_end|>",
         "tokenizer:\n  pad_token: <|endoftext|>\n  eos_token: <|im_end|>"),
        ("hub_token_masked", "TrainingArguments' __str__ masks its *_token fields", "hub_token=<HUB_TOKEN>",
         "TrainingArguments(\n_n_gpu=8,\nhub_strategy=every_save,\nhub_token=<HUB_TOKEN>,\nlearning_rate=2e-05,\n)"),
        ("token_true", "from_pretrained(token=True)", "token=True",
         "INFO: loading AutoModelForCausalLM.from_pretrained('meta-llama/Llama-3.1-8B', token=True)"),
        ("usage_tokens", "an OpenAI usage record", '"total_tokens":1523',
         '{"usage":{"prompt_tokens":1201,"completion_tokens":322,"total_tokens":1523}}'),
        ("logprob_token", "an OpenAI logprobs entry", '"token":"Hello"',
         '{"logprobs":{"content":[{"token":"Hello","logprob":-0.0123,"bytes":[72,101,108,108,111]}]}}'),
        ("tokens_per_sec_target", "a throughput monitor's dataclass repr", "tokens_per_sec_target=18000",
         "INFO callbacks: ThroughputMonitor(window_size=100, tokens_per_sec_target=18000, log_every='step')"),
        ("pass_at_k", "an eval harness metric", "pass@1: 0.6707", "humaneval | pass@1: 0.6707 | pass@10: 0.8512"),
        ("commit_sha", "git rev-parse in a job header", sha40, f"+ git rev-parse HEAD\n{sha40}"),
        ("revision_sha", "a model revision", f"revision='{sha40}'",
         f"snapshot_download(repo_id='acme/llm-7b', revision='{sha40}')"),
        ("checkpoint_sha256", "a checkpoint digest", sha64, f"saved checkpoint step-1200.pt sha256={sha64}"),
        ("mlflow_run_id", "an MLflow run id", run, f"INFO mlflow.tracking: started run_id={run} experiment_id=7"),
        ("comet_experiment_key", "Comet's experiment key (a 32-hex id shown in its URL)", f"experiment_key='{exp}'",
         f"COMET INFO: Experiment(project='llm', workspace='acme', experiment_key='{exp}')"),
        ("wandb_run_url", "a W&B run URL", "https://wandb.ai/acme/llm/runs/3k9x2v1q",
         "wandb: 🚀 View run at https://wandb.ai/acme/llm/runs/3k9x2v1q"),
        ("nccl_comm_id", "NCCL's init line with its commId", "commId 0x6f9e6c0b3a1d7f2e",
         "gpu-17:4242:4310 [0] NCCL INFO comm 0x55d5c8a0 rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 1b000 "
         "commId 0x6f9e6c0b3a1d7f2e - Init COMPLETE"),
        ("ucx_pkey", "UCX's InfiniBand partition key", "UCX_IB_PKEY=0x8001",
         "UCX_TLS=rc,sm,cuda_copy\nUCX_NET_DEVICES=mlx5_0:1\nUCX_IB_PKEY=0x8001"),
        ("nccl_env", "NCCL's env settings", "NCCL_IB_HCA=mlx5_0,mlx5_1",
         "NCCL INFO NCCL_IB_HCA set by environment to mlx5_0,mlx5_1\nNCCL_IB_HCA=mlx5_0,mlx5_1"),
        ("nvidia_visible_uuid", "a GPU UUID in env", (gu := "GPU-" + uuid4()), f"NVIDIA_VISIBLE_DEVICES={gu}"),
        ("torchelastic_run_id", "torch elastic's rendezvous id", "rdzv_id=llm-pretrain-481516",
         "torchrun --nnodes=4 --rdzv_id=llm-pretrain-481516 --rdzv_backend=c10d train.py"),
        ("ssh_auth_sock", "an SSH agent socket", "SSH_AUTH_SOCK=/tmp/ssh-XXXXa1b2c3/agent.4242",
         "SSH_AUTH_SOCK=/tmp/ssh-XXXXa1b2c3/agent.4242\nSSH_TTY=/dev/pts/0"),
        ("pip_masked_index", "pip masks an index URL's password", "https://ml-bot:****@pypi.acme.io/simple",
         "Looking in indexes: https://pypi.org/simple, https://ml-bot:****@pypi.acme.io/simple"),
        ("ngc_oauthtoken_user", "NGC's literal user name", "Username: $oauthtoken",
         "+ docker login nvcr.io\nUsername: $oauthtoken\nPassword:"),
        ("vllm_api_key_empty", "vLLM's docs: a client's key when the server has none", "api_key='EMPTY'",
         "client = OpenAI(base_url='http://localhost:8000/v1', api_key='EMPTY')"),
        ("stars_redacted_mask", "a sanitizer's mask", "'api_key': '***REDACTED***'",
         "wandb_login.py:_login():68] setting login settings: {'api_key': '***REDACTED***'}"),
        ("secretstr_mask", "pydantic's SecretStr mask", "upstream_auth_token=SecretStr('**********')",
         "settings: Settings(upstream_auth_token=SecretStr('**********'), timeout_s=600)"),
        ("hf_token_saved", "huggingface_hub login's message",
         "Your token has been saved to /root/.cache/huggingface/token",
         "Token is valid (permission: write).\nYour token has been saved to /root/.cache/huggingface/token\n"
         "Login successful"),
        ("git_url_no_pw", "a git URL without credentials", "https://git.acme.io/ml/llm-train.git",
         "origin\thttps://git.acme.io/ml/llm-train.git (fetch)"),
        ("k8s_websocket_channel", "a websocket protocol without a token", "v4.channel.k8s.io",
         "I0502 08:41:09.117  7 round_trippers.go:473]     Sec-WebSocket-Protocol: v4.channel.k8s.io"),
        ("b64_plain_config", "base64 of a config without secrets", (pc := b64("model: llama-3-8b\nlr: 2e-5\n")),
         f"CONFIG_B64={pc}"),
        ("auth_tuple_none", "an auth kwarg without credentials", "'auth': None",
         "request kwargs {'url': 'https://artifacts.acme.io/upload', 'auth': None, 'timeout': 30}"),
        ("private_key_path_env", "a path to a key in env", "SSH_PRIVATE_KEY_PATH=/secrets/id_ed25519",
         "SSH_PRIVATE_KEY_PATH=/secrets/id_ed25519"),
        ("passphrase_required", "a message that names a passphrase", "GPG_PASSPHRASE is not set",
         "error: GPG_PASSPHRASE is not set; skipping artifact signing"),
        ("x_request_id", "a request id header", (rq := uuid4()), f"< x-request-id: {rq}"),
        ("max_num_batched_tokens", "vLLM's scheduler args", "max_num_batched_tokens=8192",
         "SchedulerConfig(max_num_batched_tokens=8192, max_num_seqs=256, max_model_len=8192)"),
        ("lower_digits_id", "a Slurm-generated job name", (jn := "job-" + rand(10, LOWER_DIGITS)),
         f"SLURM_JOB_NAME={jn}"),
    ]


def rows() -> list[dict[str, str]]:
    _draws.reset()
    groups = (_reprs, _env_dumps, _urls_and_clis, _headers_and_json)
    return case_rows(case for group in groups for case in group()) + keep_rows(_look_alikes())


def write(path: Path) -> int:
    return write_rows(path, rows())
