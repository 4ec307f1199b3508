"""What the agent draws: the game's look and the pictures the model sees.

- :mod:`.look`: the real game's look (panel, colours, outlines, dimming, tint), as data.
- :mod:`.paint`: pieces painted onto a crop in that look.
- :mod:`.repaint`: a frame's board and drawer redrawn from the reported state, when the game's
  pictures are absent, broken or not wanted.
- :mod:`.annotate`: the marks drawn on a picture for the model (grid, labels, candidates).
- :mod:`.legibility`: checks that those marks stay readable on the game's colours.
- :mod:`.marks`: the marks a decision asks for, drawn and encoded once.

Boards drawn elsewhere, and why they are not drawn here: the simulator's screen
(``replica.crops``) places each piece by the scene file's own transforms, on purpose sharing no
geometry with the agent so that it can catch the agent's mistakes (it paints with :mod:`.paint`);
a replay (``replay.board``) draws SVG for a browser page; the console (``console.editor``) draws
SVG overlays in the game's world pixels; the planner's sketch (``planner.sketch``) is a design
drawing in plain colours with a figure's target outline.
"""
