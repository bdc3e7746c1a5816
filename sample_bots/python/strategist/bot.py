"""The strategist: the known winning heuristics (see arena.bots.policies.StrategistPolicy).

It shows the other way to write a bot: hand ``run`` a policy class built with the seed.
"""

from arena.bots.policies import StrategistPolicy
from arena.bots.sdk import run
from arena.rules.options import VARIANTS

if __name__ == "__main__":
    run(policy=StrategistPolicy, name="strategist", version="1.0", variants=VARIANTS)
