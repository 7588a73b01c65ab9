-- luacheck: globals love
-- LÖVE configuration: a small window, no audio (a container or CI machine
-- has no sound device, and the example needs none).
function love.conf(t)
  t.identity = "jrpc-example"
  t.version = "11.4"
  t.window.title = "jrpc in LÖVE"
  t.window.width, t.window.height = 480, 240
  t.modules.audio, t.modules.sound = false, false
  t.modules.joystick, t.modules.physics, t.modules.video = false, false, false
end
