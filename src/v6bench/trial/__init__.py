"""One trial on the lab: a validated request (``request``), the engine spec
it becomes (``spec``), running it with the lab's own observations
(``execute``) and printing it (``table``)."""
