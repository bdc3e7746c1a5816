"""What a bot's decision message means: one of the legal actions, or why it is none."""

from __future__ import annotations

from arena.protocol import pb
from arena.protocol.convert import ProtocolError, action_from_message
from arena.referee.faults import FaultKind
from arena.rules.actions import UNO_CALL, Action, action_name

Problem = tuple[FaultKind, str]


def read_action(decision: pb.Decision, legal: list[Action]
                ) -> tuple[Action | None, Problem | None]:
    """The action ``decision`` chooses among ``legal`` (by index or by value, the UNO call
    flag allowed on a play), or None and the fault it is."""
    choice = decision.WhichOneof("choice")
    if choice == "action_index":
        if decision.action_index < len(legal):
            return legal[decision.action_index], None
        return None, (FaultKind.ILLEGAL_ACTION, f"action index {decision.action_index} "
                      f"out of range 0..{len(legal) - 1}")
    if choice == "action":
        try:
            action = action_from_message(decision.action)
        except ProtocolError as error:
            return None, (FaultKind.ILLEGAL_ACTION, str(error))
        if action in legal or (action < 128 and (action ^ UNO_CALL) in legal):
            return action, None
        return None, (FaultKind.ILLEGAL_ACTION,
                      f"{action_name(action)} is not among the legal actions")
    return None, (FaultKind.MALFORMED, "a decision with no action")
