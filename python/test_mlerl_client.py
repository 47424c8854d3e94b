"""Tests of mlerl_client.py. The local ones always run; the others need a
running `mlerl serve` on the tiny-auc fixture (MLERL_URL, MLERL_SERVE_TOKEN,
MLERL_TEST_TASK): serve's Go test TestPythonClient starts one and runs this
file with /usr/bin/python3, calling each adapter as its trainer does."""

import asyncio
import os
import random
import sys
import unittest

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import mlerl_client as mc  # noqa: E402

TASK = os.environ.get("MLERL_TEST_TASK", "tiny-auc")
LIVE = bool(os.environ.get("MLERL_URL"))

PERFECT = '''import os
print("tag", %r)
open("submission.csv", "w").write("id,label\\nb1,0.1\\nb2,0.9\\nb3,0.8\\nb4,0.2\\n")
'''


def reply(tag):
    """A model's whole reply: prose, then the program in a python block."""
    return "I predict x directly.\n\n```python\n" + PERFECT % tag + "```\n"


class Local(unittest.TestCase):
    def test_duration_weights(self):
        self.assertEqual(mc.duration_weights([1, 3]), [0.5, 1.5])
        self.assertEqual(mc.duration_weights([0, 0]), [1.0, 1.0])
        self.assertEqual(mc.duration_weights([]), [])
        self.assertEqual(mc.duration_weights([-1, 2]), [0.0, 2.0])

    def test_scale_advantages(self):
        self.assertEqual(mc.scale_advantages([1.0, -2.0], [1, 3]), [0.5, -3.0])
        with self.assertRaises(ValueError):
            mc.scale_advantages([1.0], [1, 2])

    def test_request_id_is_stable(self):
        self.assertEqual(mc.request_id_of("a", 1), mc.request_id_of("a", 1))
        self.assertNotEqual(mc.request_id_of("a", 1), mc.request_id_of("a", 2))


@unittest.skipUnless(LIVE, "needs a running mlerl serve (MLERL_URL)")
class Live(unittest.TestCase):
    def setUp(self):
        self.c = mc.Client()

    def test_tasks(self):
        tasks = self.c.tasks()
        self.assertEqual([t["name"] for t in tasks], [TASK])
        self.assertIn("# Task: " + TASK, tasks[0]["prompt"])

    def test_weights_agree_with_go(self):
        rng = random.Random(7)
        for n in (1, 5, 64):
            d = [rng.uniform(0, 600) for _ in range(n)]
            go = self.c.weights(d)
            py = mc.duration_weights(d)
            for a, b in zip(go, py):
                self.assertAlmostEqual(a, b, delta=1e-12)
        self.assertEqual(self.c.weights([0, 0]), mc.duration_weights([0, 0]))

    def test_submit_then_poll(self):
        slow = "import time\ntime.sleep(1)\n" + PERFECT % "poll"
        first = self.c.submit(TASK, code=slow, wait_s=0)
        self.assertEqual(first["status"], "running")
        ep = self.c.poll(first["id"], wait_s=60)
        self.assertEqual(ep["status"], "done")
        self.assertTrue(ep["valid"])
        again = self.c.submit(TASK, code=slow, wait_s=0)  # same request id: no second run
        self.assertEqual(again["episode"], ep["episode"])

    def test_no_program_fails_the_episode(self):
        ep = self.c.run(TASK, completion="I would train a random forest.")
        self.assertEqual(ep["reward"], -10)
        self.assertFalse(ep["valid"])
        self.assertIn("no code block", ep["problem"])

    def test_async_twins(self):
        async def main():
            return await asyncio.gather(*[self.c.arun(TASK, completion=reply("async%d" % i)) for i in range(3)])
        eps = asyncio.run(main())
        self.assertEqual([ep["reward"] for ep in eps], [1.0, 1.0, 1.0])

    def test_verl_compute_score(self):
        out = asyncio.run(mc.compute_score("mlerl", reply("verl"), TASK, {"index": 0}))
        self.assertEqual(out["score"], 1.0)
        self.assertGreater(out["duration_s"], 0)
        self.assertEqual(mc.compute_score_sync("mlerl", "no code", TASK)["score"], -10)

    def test_openrlhf_reward_func(self):
        prompt = self.c.tasks()[0]["prompt"]
        queries = [prompt + reply("openrlhf"), prompt + "Sorry, no program."]
        out = mc.reward_func(queries, [prompt, prompt], [TASK, TASK])
        rewards = [float(x) for x in out["rewards"]]
        self.assertEqual(rewards, [1.0, -10.0])
        self.assertEqual(len(out["extra_logs"]["duration_s"]), 2)

    def test_trl_reward(self):
        completions = [[{"role": "assistant", "content": reply("trl")}], reply("trl2")]
        # as GRPOTrainer calls it: dataset columns and its own extras as keywords
        rewards = mc.trl_reward(prompts=["p", "p"], completions=completions, completion_ids=[[1], [2]],
                                task=[TASK, TASK], trainer_state=None)
        self.assertEqual(rewards, [1.0, 1.0])
        self.assertEqual(len(mc.trl_reward.last_durations), 2)

    def test_skyrl_env(self):
        env = mc.MlerlEnv({"max_turns": 2}, {"reward_spec": {"ground_truth": TASK}})
        prompt, meta = env.init()
        self.assertIn(TASK, prompt[-1]["content"])
        out = env.step("```python\nraise SystemExit(3)\n```")
        self.assertFalse(out["done"])
        self.assertLess(out["reward"], -9)
        self.assertIn("Your previous solution", out["observations"][0]["content"])
        out = env.step(reply("skyrl"))
        self.assertTrue(out["done"])
        self.assertEqual(out["reward"], 1.0)
        self.assertEqual(out["metadata"]["kind"], "improve")
        env.close()

    @unittest.skipUnless(os.environ.get("MLERL_SERVE_TOKEN"), "server has no token")
    def test_wrong_token_refused(self):
        bad = mc.Client(token="wrong", retries=0)
        with self.assertRaises(mc.MlerlError) as cm:
            bad.tasks()
        self.assertEqual(cm.exception.status, 401)


if __name__ == "__main__":
    unittest.main()
