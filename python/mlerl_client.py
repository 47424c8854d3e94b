"""Client of `mlerl serve`, the environment for external LM trainers.

One file, standard library only: copy it next to a trainer's script. The
server runs a model's reply (or a program) as one sandboxed, graded episode
and answers with its reward, duration and the feedback text an improve
prompt would show (docs/serve.md). Adapters at the end plug it into verl,
OpenRLHF, TRL and SkyRL (docs/trainers.md).

Configuration by environment: MLERL_URL (default http://127.0.0.1:8765),
MLERL_SERVE_TOKEN (the bearer token, when the server needs one).
"""

import asyncio
import hashlib
import json
import os
import threading
import time
import urllib.error
import urllib.request
from concurrent.futures import ThreadPoolExecutor

__all__ = [
    "Client", "MlerlError", "duration_weights", "scale_advantages",
    "compute_score", "compute_score_sync", "reward_func", "trl_reward", "MlerlEnv",
]

DEFAULT_URL = "http://127.0.0.1:8765"


class MlerlError(Exception):
    """The server refused a request (status is the HTTP status)."""

    def __init__(self, status, message):
        super().__init__("mlerl serve: HTTP %d: %s" % (status, message))
        self.status = status
        self.message = message


def request_id_of(*parts):
    """A request id derived from the sample itself: a trainer retrying the
    same sample gets the same episode instead of a second run."""
    h = hashlib.sha256()
    for p in parts:
        h.update(str(p).encode("utf-8", "replace"))
        h.update(b"\0")
    return "py-" + h.hexdigest()[:32]


class Client:
    """Blocking calls to the server; every method has an async twin
    (a-prefixed) that runs it in a thread, so event loops are not blocked.

    POSTs carry a request id, so retrying them after a dropped connection
    never starts a second run: the client retries connection errors and
    502/503/504 up to `retries` times.
    """

    def __init__(self, url=None, token=None, timeout=60.0, retries=5):
        self.url = (url or os.environ.get("MLERL_URL") or DEFAULT_URL).rstrip("/")
        self.token = token if token is not None else os.environ.get("MLERL_SERVE_TOKEN", "")
        self.timeout = timeout  # seconds per HTTP call, on top of any wait_s
        self.retries = retries

    # -- plumbing --------------------------------------------------------
    def _call(self, method, path, body=None, wait_s=0.0):
        data = None if body is None else json.dumps(body).encode()
        headers = {"Content-Type": "application/json"}
        if self.token:
            headers["Authorization"] = "Bearer " + self.token
        delay = 0.5
        for attempt in range(self.retries + 1):
            req = urllib.request.Request(self.url + path, data=data, method=method, headers=headers)
            try:
                with urllib.request.urlopen(req, timeout=self.timeout + wait_s) as resp:
                    return resp.status, json.loads(resp.read() or b"null")
            except urllib.error.HTTPError as e:
                raw = e.read()
                try:
                    msg = json.loads(raw).get("error", raw.decode())
                except (ValueError, AttributeError):
                    msg = raw.decode("utf-8", "replace")
                if e.code not in (502, 503, 504) or attempt == self.retries:
                    raise MlerlError(e.code, msg) from None
            except (urllib.error.URLError, ConnectionError, TimeoutError):
                if attempt == self.retries:
                    raise
            time.sleep(delay)
            delay = min(delay * 2, 10.0)
        raise AssertionError("unreachable")

    # -- the API ---------------------------------------------------------
    def tasks(self):
        """[{name, metric, lower_is_better, prompt, system}]"""
        return self._call("GET", "/v1/tasks")[1]

    def submit(self, task, completion=None, code=None, kind="scratch", parent=None,
               request_id=None, wait_s=0.0, policy_version=0):
        """Start an episode; the episode result when done within wait_s,
        else {"id", "request_id", "status": "running"} to poll."""
        if (completion is None) == (code is None):
            raise ValueError("give exactly one of completion and code")
        body = {"task": task, "kind": kind, "wait_s": wait_s, "policy_version": policy_version,
                "request_id": request_id or request_id_of(task, kind, parent, completion, code)}
        if completion is not None:
            body["completion"] = completion
        else:
            body["code"] = code
        if parent:
            body["parent"] = parent
        return self._call("POST", "/v1/episodes", body, wait_s)[1]

    def poll(self, episode_id, wait_s=30.0):
        """The episode result once done; a status "running" after wait_s."""
        return self._call("GET", "/v1/episodes/%s?wait_s=%g" % (episode_id, wait_s), None, wait_s)[1]

    def run(self, task, completion=None, code=None, timeout=None, poll_s=30.0, **kw):
        """Submit and long-poll until the episode is done (or timeout s)."""
        deadline = None if timeout is None else time.monotonic() + timeout
        ep = self.submit(task, completion=completion, code=code, wait_s=poll_s, **kw)
        while ep.get("status") != "done":
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError("episode %s not done after %ss" % (ep.get("id"), timeout))
            ep = self.poll(ep["id"], poll_s)
        return ep

    def weights(self, durations_s):
        """The server's duration weights (rl.DurationWeights) for a batch."""
        return self._call("POST", "/v1/weights", {"durations_s": list(durations_s)})[1]["weights"]

    def new_session(self, task, max_turns=None):
        body = {"task": task}
        if max_turns:
            body["max_turns"] = max_turns
        return self._call("POST", "/v1/sessions", body)[1]

    def step(self, session_id, action):
        """{observation, reward, done, info}; waits for the program."""
        return self._call("POST", "/v1/sessions/%s/step" % session_id, {"action": action}, 3600.0)[1]

    def get_reward(self, queries, prompts, labels):
        body = {"query": list(queries), "prompts": list(prompts), "labels": list(labels)}
        return self._call("POST", "/get_reward", body, 3600.0)[1]

    # -- async twins -----------------------------------------------------
    async def atasks(self):
        return await asyncio.to_thread(self.tasks)

    async def asubmit(self, *a, **kw):
        return await asyncio.to_thread(self.submit, *a, **kw)

    async def apoll(self, *a, **kw):
        return await asyncio.to_thread(self.poll, *a, **kw)

    async def arun(self, *a, **kw):
        return await asyncio.to_thread(self.run, *a, **kw)

    async def aweights(self, durations_s):
        return await asyncio.to_thread(self.weights, durations_s)

    async def astep(self, session_id, action):
        return await asyncio.to_thread(self.step, session_id, action)


def duration_weights(durations_s):
    """w_k = dt_k / mean(dt) over the batch, as the Go learner computes them
    (rl.DurationWeights): negative durations count as 0; an empty or
    all-zero batch gets weights of 1. The mean weight is 1, so the update's
    step size is unchanged; slow programs count more per sample."""
    d = [max(float(x), 0.0) for x in durations_s]
    mean = sum(d) / len(d) if d else 0.0
    if mean <= 0:
        return [1.0] * len(d)
    return [x / mean for x in d]


def scale_advantages(advantages, durations_s):
    """Each advantage times its sample's duration weight (a list, or a
    torch tensor of the same shape as the advantages' first dimension)."""
    w = duration_weights(durations_s)
    if len(w) != len(advantages):
        raise ValueError("%d advantages, %d durations" % (len(advantages), len(w)))
    if hasattr(advantages, "new_tensor"):  # torch: keep device and dtype
        wt = advantages.new_tensor(w)
        return advantages * wt.view(-1, *([1] * (advantages.dim() - 1)))
    return [a * x for a, x in zip(advantages, w)]


# -- trainer adapters ------------------------------------------------------

_client = None
_client_lock = threading.Lock()


def default_client():
    """One Client per process, configured from the environment."""
    global _client
    with _client_lock:
        if _client is None:
            _client = Client()
        return _client


def _task_of(*candidates):
    for c in candidates:
        if isinstance(c, str) and c:
            return c
    raise ValueError("no task name given (put it in the dataset's ground truth / label / task column)")


def _info(ep):
    return {"duration_s": ep["duration_s"], "valid": float(ep["valid"]), "stages": float(len(ep["stages"])),
            "timed_out": float(ep["timed_out"])}


def compute_score_sync(data_source, solution_str, ground_truth, extra_info=None):
    """verl's custom reward function, blocking form (naive/batch managers)."""
    extra_info = extra_info or {}
    task = _task_of(extra_info.get("task") if isinstance(extra_info, dict) else None, ground_truth, data_source)
    rid = extra_info.get("request_id") if isinstance(extra_info, dict) else None
    ep = default_client().run(task, completion=solution_str,
                              request_id=rid or request_id_of("verl", task, solution_str))
    out = {"score": ep["reward"]}
    out.update(_info(ep))
    return out


async def compute_score(data_source, solution_str, ground_truth, extra_info=None):
    """verl's custom reward function (custom_reward_function.name=compute_score):
    the task is extra_info["task"], else ground_truth, else data_source.
    Returns {"score": reward, "duration_s", "valid", "stages", "timed_out"};
    verl logs the extra keys. Keep the durations for the advantage hook."""
    return await asyncio.to_thread(compute_score_sync, data_source, solution_str, ground_truth, extra_info)


def reward_func(queries, prompts, labels, **kwargs):
    """OpenRLHF's remote reward function (--remote_rm_url mlerl_client.py):
    labels are task names. Returns rewards, scores and extra_logs (torch
    tensors when torch is importable, lists otherwise)."""
    r = default_client().get_reward(queries, prompts, labels)
    try:
        import torch
    except ImportError:
        return r
    logs = {k: torch.tensor(v, dtype=torch.float32) for k, v in r["extra_logs"].items()}
    return {"rewards": torch.tensor(r["rewards"], dtype=torch.float32),
            "scores": torch.tensor(r["scores"], dtype=torch.float32), "extra_logs": logs}


def _text(completion):
    """A TRL completion: a string, or a conversation whose last message is the reply."""
    if isinstance(completion, str):
        return completion
    if isinstance(completion, list) and completion:
        return completion[-1].get("content", "")
    return str(completion)


def trl_reward(prompts, completions, **kwargs):
    """A TRL GRPOTrainer reward function: the dataset's "task" column names
    each sample's task. The episodes run in parallel. Durations of the last
    batch are kept in trl_reward.last_durations for the advantage hook."""
    tasks = kwargs.get("task") or kwargs.get("label")
    if tasks is None:
        raise ValueError('trl_reward needs a "task" column in the dataset')
    c = default_client()

    def one(i):
        text = _text(completions[i])
        return c.run(tasks[i], completion=text, request_id=request_id_of("trl", tasks[i], text))

    with ThreadPoolExecutor(max_workers=min(32, max(1, len(completions)))) as pool:
        eps = list(pool.map(one, range(len(completions))))
    trl_reward.last_durations = [ep["duration_s"] for ep in eps]
    return [float(ep["reward"]) for ep in eps]


trl_reward.last_durations = []

try:  # SkyRL's base class when installed; the same interface without it
    from skyrl_gym.envs.base_text_env import BaseTextEnv as _EnvBase
except ImportError:  # pragma: no cover - depends on the trainer's environment
    _EnvBase = object


class MlerlEnv(_EnvBase):
    """A SkyRL-Gym-style text environment: init(prompt) opens a session,
    step(action) runs the reply as one episode. The task comes from
    extras["task"] or extras["reward_spec"]["ground_truth"]. The episode is
    done after max_turns steps (env_config max_turns, default the server's)."""

    def __init__(self, env_config=None, extras=None, client=None):
        if _EnvBase is not object:
            super().__init__()
        extras = extras or {}
        spec = extras.get("reward_spec") or {}
        self.task = _task_of(extras.get("task"), spec.get("ground_truth"))
        cfg = env_config or {}
        self.max_turns = cfg.get("max_turns") if hasattr(cfg, "get") else None
        self.client = client or default_client()
        self.session = None
        self.durations = []

    def init(self, prompt=None):
        self.session = self.client.new_session(self.task, self.max_turns)
        if prompt is None:
            prompt = [{"role": "system", "content": self.session["system"]},
                      {"role": "user", "content": self.session["observation"]}]
        return prompt, {"session": self.session["id"]}

    def step(self, action):
        r = self.client.step(self.session["id"], action)
        self.durations.append(r["info"]["duration_s"])
        obs = [] if r["done"] else [{"role": "user", "content": r["observation"]}]
        return {"observations": obs, "reward": r["reward"], "done": r["done"], "metadata": r["info"]}

    def close(self):
        self.session = None
