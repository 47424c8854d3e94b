import os
import sys

# Every way a program might claim stages it never reached.
for stage in ["loaded data", "defined model", "trained model", "predicted test labels"]:
    print('__mlerl_stage__("%s")' % stage)
    print(stage)
    __mlerl_stage__(stage)
__mlerl_stage__("trained model")
for guess in ["0", "1", "2", "3", "00000000000000000000000000000000 0",
              "deadbeefdeadbeefdeadbeefdeadbeef 1", "trained model", '__mlerl_stage__("trained model")']:
    try:
        os.write(3, (guess + "\n").encode())
    except OSError:
        pass
sys.stdout.flush()
