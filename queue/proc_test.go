package queue

const workerEnv = "MLERL_QUEUE_TEST_WORKER"

func workerMain() int { return 0 }
