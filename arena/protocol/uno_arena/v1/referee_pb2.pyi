from google.protobuf.internal import containers as _containers
from google.protobuf.internal import enum_type_wrapper as _enum_type_wrapper
from google.protobuf import descriptor as _descriptor
from google.protobuf import message as _message
from collections.abc import Iterable as _Iterable, Mapping as _Mapping
from typing import ClassVar as _ClassVar, Optional as _Optional, Union as _Union

DESCRIPTOR: _descriptor.FileDescriptor

class ProtocolVersion(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    PROTOCOL_VERSION_UNSPECIFIED: _ClassVar[ProtocolVersion]
    PROTOCOL_VERSION_1: _ClassVar[ProtocolVersion]

class Colour(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    COLOUR_UNSPECIFIED: _ClassVar[Colour]
    COLOUR_RED: _ClassVar[Colour]
    COLOUR_YELLOW: _ClassVar[Colour]
    COLOUR_GREEN: _ClassVar[Colour]
    COLOUR_BLUE: _ClassVar[Colour]

class CardKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    CARD_KIND_UNSPECIFIED: _ClassVar[CardKind]
    CARD_KIND_NUMBER: _ClassVar[CardKind]
    CARD_KIND_SKIP: _ClassVar[CardKind]
    CARD_KIND_REVERSE: _ClassVar[CardKind]
    CARD_KIND_DRAW_TWO: _ClassVar[CardKind]
    CARD_KIND_WILD: _ClassVar[CardKind]
    CARD_KIND_WILD_DRAW_FOUR: _ClassVar[CardKind]

class DecisionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DECISION_KIND_UNSPECIFIED: _ClassVar[DecisionKind]
    DECISION_KIND_PLAY_OR_DRAW: _ClassVar[DecisionKind]
    DECISION_KIND_PLAY_DRAWN_OR_KEEP: _ClassVar[DecisionKind]
    DECISION_KIND_CHOOSE_COLOUR: _ClassVar[DecisionKind]
    DECISION_KIND_CHALLENGE_OR_ACCEPT: _ClassVar[DecisionKind]

class ActionKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    ACTION_KIND_UNSPECIFIED: _ClassVar[ActionKind]
    ACTION_KIND_PLAY: _ClassVar[ActionKind]
    ACTION_KIND_DRAW: _ClassVar[ActionKind]
    ACTION_KIND_KEEP: _ClassVar[ActionKind]
    ACTION_KIND_CHOOSE_COLOUR: _ClassVar[ActionKind]
    ACTION_KIND_CHALLENGE: _ClassVar[ActionKind]
    ACTION_KIND_ACCEPT: _ClassVar[ActionKind]

class Direction(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DIRECTION_UNSPECIFIED: _ClassVar[Direction]
    DIRECTION_CLOCKWISE: _ClassVar[Direction]
    DIRECTION_COUNTER_CLOCKWISE: _ClassVar[Direction]

class DrawReason(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    DRAW_REASON_UNSPECIFIED: _ClassVar[DrawReason]
    DRAW_REASON_CHOICE: _ClassVar[DrawReason]
    DRAW_REASON_DRAW_TWO: _ClassVar[DrawReason]
    DRAW_REASON_WILD_DRAW_FOUR: _ClassVar[DrawReason]
    DRAW_REASON_CHALLENGE_GUILTY: _ClassVar[DrawReason]
    DRAW_REASON_CHALLENGE_INNOCENT: _ClassVar[DrawReason]
    DRAW_REASON_UNO_PENALTY: _ClassVar[DrawReason]
    DRAW_REASON_FIRST_CARD_DRAW_TWO: _ClassVar[DrawReason]

class FaultKind(int, metaclass=_enum_type_wrapper.EnumTypeWrapper):
    __slots__ = ()
    FAULT_KIND_UNSPECIFIED: _ClassVar[FaultKind]
    FAULT_KIND_TIMEOUT: _ClassVar[FaultKind]
    FAULT_KIND_ILLEGAL_ACTION: _ClassVar[FaultKind]
    FAULT_KIND_OUT_OF_TURN: _ClassVar[FaultKind]
    FAULT_KIND_MALFORMED: _ClassVar[FaultKind]
    FAULT_KIND_DISCONNECTED: _ClassVar[FaultKind]
    FAULT_KIND_NO_HELLO: _ClassVar[FaultKind]
    FAULT_KIND_STRIKE_LIMIT: _ClassVar[FaultKind]
    FAULT_KIND_FLOODED: _ClassVar[FaultKind]
PROTOCOL_VERSION_UNSPECIFIED: ProtocolVersion
PROTOCOL_VERSION_1: ProtocolVersion
COLOUR_UNSPECIFIED: Colour
COLOUR_RED: Colour
COLOUR_YELLOW: Colour
COLOUR_GREEN: Colour
COLOUR_BLUE: Colour
CARD_KIND_UNSPECIFIED: CardKind
CARD_KIND_NUMBER: CardKind
CARD_KIND_SKIP: CardKind
CARD_KIND_REVERSE: CardKind
CARD_KIND_DRAW_TWO: CardKind
CARD_KIND_WILD: CardKind
CARD_KIND_WILD_DRAW_FOUR: CardKind
DECISION_KIND_UNSPECIFIED: DecisionKind
DECISION_KIND_PLAY_OR_DRAW: DecisionKind
DECISION_KIND_PLAY_DRAWN_OR_KEEP: DecisionKind
DECISION_KIND_CHOOSE_COLOUR: DecisionKind
DECISION_KIND_CHALLENGE_OR_ACCEPT: DecisionKind
ACTION_KIND_UNSPECIFIED: ActionKind
ACTION_KIND_PLAY: ActionKind
ACTION_KIND_DRAW: ActionKind
ACTION_KIND_KEEP: ActionKind
ACTION_KIND_CHOOSE_COLOUR: ActionKind
ACTION_KIND_CHALLENGE: ActionKind
ACTION_KIND_ACCEPT: ActionKind
DIRECTION_UNSPECIFIED: Direction
DIRECTION_CLOCKWISE: Direction
DIRECTION_COUNTER_CLOCKWISE: Direction
DRAW_REASON_UNSPECIFIED: DrawReason
DRAW_REASON_CHOICE: DrawReason
DRAW_REASON_DRAW_TWO: DrawReason
DRAW_REASON_WILD_DRAW_FOUR: DrawReason
DRAW_REASON_CHALLENGE_GUILTY: DrawReason
DRAW_REASON_CHALLENGE_INNOCENT: DrawReason
DRAW_REASON_UNO_PENALTY: DrawReason
DRAW_REASON_FIRST_CARD_DRAW_TWO: DrawReason
FAULT_KIND_UNSPECIFIED: FaultKind
FAULT_KIND_TIMEOUT: FaultKind
FAULT_KIND_ILLEGAL_ACTION: FaultKind
FAULT_KIND_OUT_OF_TURN: FaultKind
FAULT_KIND_MALFORMED: FaultKind
FAULT_KIND_DISCONNECTED: FaultKind
FAULT_KIND_NO_HELLO: FaultKind
FAULT_KIND_STRIKE_LIMIT: FaultKind
FAULT_KIND_FLOODED: FaultKind

class Card(_message.Message):
    __slots__ = ("colour", "kind", "number")
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    NUMBER_FIELD_NUMBER: _ClassVar[int]
    colour: Colour
    kind: CardKind
    number: int
    def __init__(self, colour: _Optional[_Union[Colour, str]] = ..., kind: _Optional[_Union[CardKind, str]] = ..., number: _Optional[int] = ...) -> None: ...

class Action(_message.Message):
    __slots__ = ("kind", "card", "colour", "uno")
    KIND_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    UNO_FIELD_NUMBER: _ClassVar[int]
    kind: ActionKind
    card: Card
    colour: Colour
    uno: bool
    def __init__(self, kind: _Optional[_Union[ActionKind, str]] = ..., card: _Optional[_Union[Card, _Mapping]] = ..., colour: _Optional[_Union[Colour, str]] = ..., uno: _Optional[bool] = ...) -> None: ...

class Hello(_message.Message):
    __slots__ = ("token", "bot_name", "bot_version", "protocol_version")
    TOKEN_FIELD_NUMBER: _ClassVar[int]
    BOT_NAME_FIELD_NUMBER: _ClassVar[int]
    BOT_VERSION_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    token: str
    bot_name: str
    bot_version: str
    protocol_version: ProtocolVersion
    def __init__(self, token: _Optional[str] = ..., bot_name: _Optional[str] = ..., bot_version: _Optional[str] = ..., protocol_version: _Optional[_Union[ProtocolVersion, str]] = ...) -> None: ...

class Decision(_message.Message):
    __slots__ = ("request_id", "action_index", "action")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    ACTION_INDEX_FIELD_NUMBER: _ClassVar[int]
    ACTION_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    action_index: int
    action: Action
    def __init__(self, request_id: _Optional[int] = ..., action_index: _Optional[int] = ..., action: _Optional[_Union[Action, _Mapping]] = ...) -> None: ...

class PlayRequest(_message.Message):
    __slots__ = ("hello", "decision")
    HELLO_FIELD_NUMBER: _ClassVar[int]
    DECISION_FIELD_NUMBER: _ClassVar[int]
    hello: Hello
    decision: Decision
    def __init__(self, hello: _Optional[_Union[Hello, _Mapping]] = ..., decision: _Optional[_Union[Decision, _Mapping]] = ...) -> None: ...

class RuleOptions(_message.Message):
    __slots__ = ("target_score", "alternative_scoring", "two_player_reverse_is_skip", "turn_limit", "round_limit", "hand_size")
    TARGET_SCORE_FIELD_NUMBER: _ClassVar[int]
    ALTERNATIVE_SCORING_FIELD_NUMBER: _ClassVar[int]
    TWO_PLAYER_REVERSE_IS_SKIP_FIELD_NUMBER: _ClassVar[int]
    TURN_LIMIT_FIELD_NUMBER: _ClassVar[int]
    ROUND_LIMIT_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZE_FIELD_NUMBER: _ClassVar[int]
    target_score: int
    alternative_scoring: bool
    two_player_reverse_is_skip: bool
    turn_limit: int
    round_limit: int
    hand_size: int
    def __init__(self, target_score: _Optional[int] = ..., alternative_scoring: _Optional[bool] = ..., two_player_reverse_is_skip: _Optional[bool] = ..., turn_limit: _Optional[int] = ..., round_limit: _Optional[int] = ..., hand_size: _Optional[int] = ...) -> None: ...

class Limits(_message.Message):
    __slots__ = ("decision_deadline_ms", "time_bank_ms", "strike_limit")
    DECISION_DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    STRIKE_LIMIT_FIELD_NUMBER: _ClassVar[int]
    decision_deadline_ms: int
    time_bank_ms: int
    strike_limit: int
    def __init__(self, decision_deadline_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ..., strike_limit: _Optional[int] = ...) -> None: ...

class Player(_message.Message):
    __slots__ = ("seat", "name", "version")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    NAME_FIELD_NUMBER: _ClassVar[int]
    VERSION_FIELD_NUMBER: _ClassVar[int]
    seat: int
    name: str
    version: str
    def __init__(self, seat: _Optional[int] = ..., name: _Optional[str] = ..., version: _Optional[str] = ...) -> None: ...

class MatchStart(_message.Message):
    __slots__ = ("match_id", "seat", "players", "rules", "limits", "seed", "protocol_version")
    MATCH_ID_FIELD_NUMBER: _ClassVar[int]
    SEAT_FIELD_NUMBER: _ClassVar[int]
    PLAYERS_FIELD_NUMBER: _ClassVar[int]
    RULES_FIELD_NUMBER: _ClassVar[int]
    LIMITS_FIELD_NUMBER: _ClassVar[int]
    SEED_FIELD_NUMBER: _ClassVar[int]
    PROTOCOL_VERSION_FIELD_NUMBER: _ClassVar[int]
    match_id: str
    seat: int
    players: _containers.RepeatedCompositeFieldContainer[Player]
    rules: RuleOptions
    limits: Limits
    seed: int
    protocol_version: ProtocolVersion
    def __init__(self, match_id: _Optional[str] = ..., seat: _Optional[int] = ..., players: _Optional[_Iterable[_Union[Player, _Mapping]]] = ..., rules: _Optional[_Union[RuleOptions, _Mapping]] = ..., limits: _Optional[_Union[Limits, _Mapping]] = ..., seed: _Optional[int] = ..., protocol_version: _Optional[_Union[ProtocolVersion, str]] = ...) -> None: ...

class Observation(_message.Message):
    __slots__ = ("seat", "hand", "top_card", "colour", "direction", "hand_sizes", "draw_pile_size", "discard_pile_size", "dealer", "scores", "round_number", "turn")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    TOP_CARD_FIELD_NUMBER: _ClassVar[int]
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    HAND_SIZES_FIELD_NUMBER: _ClassVar[int]
    DRAW_PILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    DISCARD_PILE_SIZE_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    ROUND_NUMBER_FIELD_NUMBER: _ClassVar[int]
    TURN_FIELD_NUMBER: _ClassVar[int]
    seat: int
    hand: _containers.RepeatedCompositeFieldContainer[Card]
    top_card: Card
    colour: Colour
    direction: Direction
    hand_sizes: _containers.RepeatedScalarFieldContainer[int]
    draw_pile_size: int
    discard_pile_size: int
    dealer: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    round_number: int
    turn: int
    def __init__(self, seat: _Optional[int] = ..., hand: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., top_card: _Optional[_Union[Card, _Mapping]] = ..., colour: _Optional[_Union[Colour, str]] = ..., direction: _Optional[_Union[Direction, str]] = ..., hand_sizes: _Optional[_Iterable[int]] = ..., draw_pile_size: _Optional[int] = ..., discard_pile_size: _Optional[int] = ..., dealer: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., round_number: _Optional[int] = ..., turn: _Optional[int] = ...) -> None: ...

class DecisionRequest(_message.Message):
    __slots__ = ("request_id", "kind", "observation", "legal_actions", "deadline_ms", "time_bank_ms")
    REQUEST_ID_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    OBSERVATION_FIELD_NUMBER: _ClassVar[int]
    LEGAL_ACTIONS_FIELD_NUMBER: _ClassVar[int]
    DEADLINE_MS_FIELD_NUMBER: _ClassVar[int]
    TIME_BANK_MS_FIELD_NUMBER: _ClassVar[int]
    request_id: int
    kind: DecisionKind
    observation: Observation
    legal_actions: _containers.RepeatedCompositeFieldContainer[Action]
    deadline_ms: int
    time_bank_ms: int
    def __init__(self, request_id: _Optional[int] = ..., kind: _Optional[_Union[DecisionKind, str]] = ..., observation: _Optional[_Union[Observation, _Mapping]] = ..., legal_actions: _Optional[_Iterable[_Union[Action, _Mapping]]] = ..., deadline_ms: _Optional[int] = ..., time_bank_ms: _Optional[int] = ...) -> None: ...

class MatchEnd(_message.Message):
    __slots__ = ("scores", "places", "disqualified", "rounds", "round_limit_reached")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    DISQUALIFIED_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    ROUND_LIMIT_REACHED_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    disqualified: _containers.RepeatedScalarFieldContainer[int]
    rounds: int
    round_limit_reached: bool
    def __init__(self, scores: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., disqualified: _Optional[_Iterable[int]] = ..., rounds: _Optional[int] = ..., round_limit_reached: _Optional[bool] = ...) -> None: ...

class PlayResponse(_message.Message):
    __slots__ = ("events", "match_start", "decision_request", "match_end")
    EVENTS_FIELD_NUMBER: _ClassVar[int]
    MATCH_START_FIELD_NUMBER: _ClassVar[int]
    DECISION_REQUEST_FIELD_NUMBER: _ClassVar[int]
    MATCH_END_FIELD_NUMBER: _ClassVar[int]
    events: _containers.RepeatedCompositeFieldContainer[Event]
    match_start: MatchStart
    decision_request: DecisionRequest
    match_end: MatchEnd
    def __init__(self, events: _Optional[_Iterable[_Union[Event, _Mapping]]] = ..., match_start: _Optional[_Union[MatchStart, _Mapping]] = ..., decision_request: _Optional[_Union[DecisionRequest, _Mapping]] = ..., match_end: _Optional[_Union[MatchEnd, _Mapping]] = ...) -> None: ...

class Fault(_message.Message):
    __slots__ = ("seat", "kind", "reason", "strikes", "disqualified")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    KIND_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    STRIKES_FIELD_NUMBER: _ClassVar[int]
    DISQUALIFIED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    kind: FaultKind
    reason: str
    strikes: int
    disqualified: bool
    def __init__(self, seat: _Optional[int] = ..., kind: _Optional[_Union[FaultKind, str]] = ..., reason: _Optional[str] = ..., strikes: _Optional[int] = ..., disqualified: _Optional[bool] = ...) -> None: ...

class Event(_message.Message):
    __slots__ = ("dealer_draw", "dealer_chosen", "round_started", "dealt", "first_card_returned", "first_card_turned", "played", "uno_called", "uno_caught", "drew", "kept_drawn_card", "colour_chosen", "skipped", "direction_changed", "reshuffled", "wild_draw_four_accepted", "challenged", "challenge_verdict", "round_ended", "match_ended", "fault")
    DEALER_DRAW_FIELD_NUMBER: _ClassVar[int]
    DEALER_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    ROUND_STARTED_FIELD_NUMBER: _ClassVar[int]
    DEALT_FIELD_NUMBER: _ClassVar[int]
    FIRST_CARD_RETURNED_FIELD_NUMBER: _ClassVar[int]
    FIRST_CARD_TURNED_FIELD_NUMBER: _ClassVar[int]
    PLAYED_FIELD_NUMBER: _ClassVar[int]
    UNO_CALLED_FIELD_NUMBER: _ClassVar[int]
    UNO_CAUGHT_FIELD_NUMBER: _ClassVar[int]
    DREW_FIELD_NUMBER: _ClassVar[int]
    KEPT_DRAWN_CARD_FIELD_NUMBER: _ClassVar[int]
    COLOUR_CHOSEN_FIELD_NUMBER: _ClassVar[int]
    SKIPPED_FIELD_NUMBER: _ClassVar[int]
    DIRECTION_CHANGED_FIELD_NUMBER: _ClassVar[int]
    RESHUFFLED_FIELD_NUMBER: _ClassVar[int]
    WILD_DRAW_FOUR_ACCEPTED_FIELD_NUMBER: _ClassVar[int]
    CHALLENGED_FIELD_NUMBER: _ClassVar[int]
    CHALLENGE_VERDICT_FIELD_NUMBER: _ClassVar[int]
    ROUND_ENDED_FIELD_NUMBER: _ClassVar[int]
    MATCH_ENDED_FIELD_NUMBER: _ClassVar[int]
    FAULT_FIELD_NUMBER: _ClassVar[int]
    dealer_draw: DealerDraw
    dealer_chosen: DealerChosen
    round_started: RoundStarted
    dealt: Dealt
    first_card_returned: FirstCardReturned
    first_card_turned: FirstCardTurned
    played: Played
    uno_called: UnoCalled
    uno_caught: UnoCaught
    drew: Drew
    kept_drawn_card: KeptDrawnCard
    colour_chosen: ColourChosen
    skipped: Skipped
    direction_changed: DirectionChanged
    reshuffled: Reshuffled
    wild_draw_four_accepted: WildDrawFourAccepted
    challenged: Challenged
    challenge_verdict: ChallengeVerdict
    round_ended: RoundEnded
    match_ended: MatchEnded
    fault: Fault
    def __init__(self, dealer_draw: _Optional[_Union[DealerDraw, _Mapping]] = ..., dealer_chosen: _Optional[_Union[DealerChosen, _Mapping]] = ..., round_started: _Optional[_Union[RoundStarted, _Mapping]] = ..., dealt: _Optional[_Union[Dealt, _Mapping]] = ..., first_card_returned: _Optional[_Union[FirstCardReturned, _Mapping]] = ..., first_card_turned: _Optional[_Union[FirstCardTurned, _Mapping]] = ..., played: _Optional[_Union[Played, _Mapping]] = ..., uno_called: _Optional[_Union[UnoCalled, _Mapping]] = ..., uno_caught: _Optional[_Union[UnoCaught, _Mapping]] = ..., drew: _Optional[_Union[Drew, _Mapping]] = ..., kept_drawn_card: _Optional[_Union[KeptDrawnCard, _Mapping]] = ..., colour_chosen: _Optional[_Union[ColourChosen, _Mapping]] = ..., skipped: _Optional[_Union[Skipped, _Mapping]] = ..., direction_changed: _Optional[_Union[DirectionChanged, _Mapping]] = ..., reshuffled: _Optional[_Union[Reshuffled, _Mapping]] = ..., wild_draw_four_accepted: _Optional[_Union[WildDrawFourAccepted, _Mapping]] = ..., challenged: _Optional[_Union[Challenged, _Mapping]] = ..., challenge_verdict: _Optional[_Union[ChallengeVerdict, _Mapping]] = ..., round_ended: _Optional[_Union[RoundEnded, _Mapping]] = ..., match_ended: _Optional[_Union[MatchEnded, _Mapping]] = ..., fault: _Optional[_Union[Fault, _Mapping]] = ...) -> None: ...

class DealerDraw(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: Card
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class DealerChosen(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class RoundStarted(_message.Message):
    __slots__ = ("round", "dealer")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    DEALER_FIELD_NUMBER: _ClassVar[int]
    round: int
    dealer: int
    def __init__(self, round: _Optional[int] = ..., dealer: _Optional[int] = ...) -> None: ...

class Dealt(_message.Message):
    __slots__ = ("seat", "cards", "amount")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    amount: int
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., amount: _Optional[int] = ...) -> None: ...

class FirstCardReturned(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: Card
    def __init__(self, card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class FirstCardTurned(_message.Message):
    __slots__ = ("card",)
    CARD_FIELD_NUMBER: _ClassVar[int]
    card: Card
    def __init__(self, card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class Played(_message.Message):
    __slots__ = ("seat", "card")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARD_FIELD_NUMBER: _ClassVar[int]
    seat: int
    card: Card
    def __init__(self, seat: _Optional[int] = ..., card: _Optional[_Union[Card, _Mapping]] = ...) -> None: ...

class UnoCalled(_message.Message):
    __slots__ = ("seat", "counted")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COUNTED_FIELD_NUMBER: _ClassVar[int]
    seat: int
    counted: bool
    def __init__(self, seat: _Optional[int] = ..., counted: _Optional[bool] = ...) -> None: ...

class UnoCaught(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Drew(_message.Message):
    __slots__ = ("seat", "cards", "amount", "reason")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    CARDS_FIELD_NUMBER: _ClassVar[int]
    AMOUNT_FIELD_NUMBER: _ClassVar[int]
    REASON_FIELD_NUMBER: _ClassVar[int]
    seat: int
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    amount: int
    reason: DrawReason
    def __init__(self, seat: _Optional[int] = ..., cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ..., amount: _Optional[int] = ..., reason: _Optional[_Union[DrawReason, str]] = ...) -> None: ...

class KeptDrawnCard(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class ColourChosen(_message.Message):
    __slots__ = ("seat", "colour")
    SEAT_FIELD_NUMBER: _ClassVar[int]
    COLOUR_FIELD_NUMBER: _ClassVar[int]
    seat: int
    colour: Colour
    def __init__(self, seat: _Optional[int] = ..., colour: _Optional[_Union[Colour, str]] = ...) -> None: ...

class Skipped(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class DirectionChanged(_message.Message):
    __slots__ = ("direction",)
    DIRECTION_FIELD_NUMBER: _ClassVar[int]
    direction: Direction
    def __init__(self, direction: _Optional[_Union[Direction, str]] = ...) -> None: ...

class Reshuffled(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: int
    def __init__(self, cards: _Optional[int] = ...) -> None: ...

class WildDrawFourAccepted(_message.Message):
    __slots__ = ("seat",)
    SEAT_FIELD_NUMBER: _ClassVar[int]
    seat: int
    def __init__(self, seat: _Optional[int] = ...) -> None: ...

class Challenged(_message.Message):
    __slots__ = ("challenger", "offender")
    CHALLENGER_FIELD_NUMBER: _ClassVar[int]
    OFFENDER_FIELD_NUMBER: _ClassVar[int]
    challenger: int
    offender: int
    def __init__(self, challenger: _Optional[int] = ..., offender: _Optional[int] = ...) -> None: ...

class ChallengeVerdict(_message.Message):
    __slots__ = ("challenger", "offender", "guilty", "hand")
    CHALLENGER_FIELD_NUMBER: _ClassVar[int]
    OFFENDER_FIELD_NUMBER: _ClassVar[int]
    GUILTY_FIELD_NUMBER: _ClassVar[int]
    HAND_FIELD_NUMBER: _ClassVar[int]
    challenger: int
    offender: int
    guilty: bool
    hand: _containers.RepeatedCompositeFieldContainer[Card]
    def __init__(self, challenger: _Optional[int] = ..., offender: _Optional[int] = ..., guilty: _Optional[bool] = ..., hand: _Optional[_Iterable[_Union[Card, _Mapping]]] = ...) -> None: ...

class Hand(_message.Message):
    __slots__ = ("cards",)
    CARDS_FIELD_NUMBER: _ClassVar[int]
    cards: _containers.RepeatedCompositeFieldContainer[Card]
    def __init__(self, cards: _Optional[_Iterable[_Union[Card, _Mapping]]] = ...) -> None: ...

class RoundEnded(_message.Message):
    __slots__ = ("round", "winner", "points", "scores", "hands", "stalled")
    ROUND_FIELD_NUMBER: _ClassVar[int]
    WINNER_FIELD_NUMBER: _ClassVar[int]
    POINTS_FIELD_NUMBER: _ClassVar[int]
    SCORES_FIELD_NUMBER: _ClassVar[int]
    HANDS_FIELD_NUMBER: _ClassVar[int]
    STALLED_FIELD_NUMBER: _ClassVar[int]
    round: int
    winner: int
    points: int
    scores: _containers.RepeatedScalarFieldContainer[int]
    hands: _containers.RepeatedCompositeFieldContainer[Hand]
    stalled: bool
    def __init__(self, round: _Optional[int] = ..., winner: _Optional[int] = ..., points: _Optional[int] = ..., scores: _Optional[_Iterable[int]] = ..., hands: _Optional[_Iterable[_Union[Hand, _Mapping]]] = ..., stalled: _Optional[bool] = ...) -> None: ...

class MatchEnded(_message.Message):
    __slots__ = ("scores", "places", "rounds", "round_limit_reached")
    SCORES_FIELD_NUMBER: _ClassVar[int]
    PLACES_FIELD_NUMBER: _ClassVar[int]
    ROUNDS_FIELD_NUMBER: _ClassVar[int]
    ROUND_LIMIT_REACHED_FIELD_NUMBER: _ClassVar[int]
    scores: _containers.RepeatedScalarFieldContainer[int]
    places: _containers.RepeatedScalarFieldContainer[int]
    rounds: int
    round_limit_reached: bool
    def __init__(self, scores: _Optional[_Iterable[int]] = ..., places: _Optional[_Iterable[int]] = ..., rounds: _Optional[int] = ..., round_limit_reached: _Optional[bool] = ...) -> None: ...
