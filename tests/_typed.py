"""Checks that an event dict has exactly the keys of its TypedDict (csvm/events.py)."""

from csvm.events import (
    AblationEvent,
    BatchEvent,
    DivergenceEvent,
    EpochEvent,
    HalfStepEvent,
    IterationEvent,
    PausedEvent,
    ResultEvent,
    StartEvent,
    TuningEvent,
)

TYPES = {
    "iteration": IterationEvent,
    "half_step": HalfStepEvent,
    "epoch": EpochEvent,
    "batch": BatchEvent,
    "divergence": DivergenceEvent,
    "start": StartEvent,
    "result": ResultEvent,
    "paused": PausedEvent,
    "tuning": TuningEvent,
    "ablation": AblationEvent,
}


def assert_typed(event):
    """The event's keys are its type's: all required ones, no unknown one."""
    cls = TYPES[event["kind"]]
    keys = set(event)
    assert cls.__required_keys__ <= keys, cls.__required_keys__ - keys
    assert keys <= cls.__required_keys__ | cls.__optional_keys__, keys - set(cls.__annotations__)
