"""What each action means, for the system prompts. One line per action; the per-domain
prompt lists only that domain's set (sets are never merged)."""

from __future__ import annotations

ACTION_DOCS: dict[str, str] = {
    "click": '{"type": "click", "x": X, "y": Y} - left click at a point',
    "double_click": '{"type": "double_click", "x": X, "y": Y}',
    "right_click": '{"type": "right_click", "x": X, "y": Y} - open a context menu',
    "drag": '{"type": "drag", "x": X, "y": Y, "x2": X2, "y2": Y2} - press at (x, y), release at (x2, y2)',
    "scroll": '{"type": "scroll", "x": X, "y": Y, "direction": "up|down|left|right", "amount": N}',
    "type": '{"type": "type", "text": "..."} - type into the focused field',
    "key": '{"type": "key", "keys": ["enter"]} - press one key (enter, tab, esc, backspace, up, f2, ...)',
    "hotkey": '{"type": "hotkey", "keys": ["ctrl", "s"]} - press keys together',
    "goto": '{"type": "goto", "text": "mail"} - open an app by name (or one of its paths)',
    "back": '{"type": "back"} - go back',
    "wait": '{"type": "wait"} - wait for the screen to update',
    "answer": '{"type": "answer", "answer": "..."} - give the final answer and end the task',
    "terminate": '{"type": "terminate", "status": "success|failure|infeasible"} - end the task',
    "tap": '{"type": "tap", "x": X, "y": Y}',
    "long_press": '{"type": "long_press", "x": X, "y": Y}',
    "swipe": '{"type": "swipe", "x": X, "y": Y, "x2": X2, "y2": Y2} - swipe from (x, y) to (x2, y2)',
    "home": '{"type": "home"} - go to the home screen',
    "enter": '{"type": "enter"} - press the keyboard\'s enter key',
    "open_app": '{"type": "open_app", "app": "mail"} - open an app from the launcher',
    "bash": '{"type": "bash", "text": "ls -la"} - run a command in the terminal (workspace is the cwd)',
    "call_tool": '{"type": "call_tool", "text": "{\\"name\\": \\"...\\", \\"arguments\\": {...}}"} - call a tool',
}
