#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-3.0-or-later
"""A minimal stream-overlay feed for eboardd.

Follows every board the daemon serves (or the ones named on the command line) and keeps,
per board, what an overlay shows: the players, the moves, both clocks, whose clock runs,
the claims a player may make, and the result. After every change it prints one JSON line
with the board's overlay state, and with --out it also rewrites a JSON file (atomically)
that a browser source can poll.

It uses only what the D-Bus contract promises:
  * org.freedesktop.DBus.ObjectManager.GetManagedObjects on /org/eboardd/Bridge1 to find
    the boards, and InterfacesAdded/InterfacesRemoved to follow them coming and going;
  * the MovePlayed signal for moves (with the clock times at the move);
  * PropertiesChanged for the clocks (WhiteTimeMs, BlackTimeMs, ClockRunning), Claims,
    Moves (takebacks), Result/Termination and the Pgn tags;
  * FlagFell and GameEnded for the end of the game.

Needs python3-dbus and python3-gi (Debian/Ubuntu: apt install python3-dbus python3-gi).

    overlay.py [--bus system|session|ADDRESS] [--out FILE] [BOARD ...]
"""

import argparse
import json
import os
import re
import sys
import tempfile

import signal

import dbus
import dbus.bus
import dbus.mainloop.glib
from gi.repository import GLib

BUS_NAME = "org.eboardd.Bridge1"
MANAGER = "/org/eboardd/Bridge1"
BOARD_IFACE = "org.eboardd.Bridge1.Board"
OM_IFACE = "org.freedesktop.DBus.ObjectManager"
PROPS_IFACE = "org.freedesktop.DBus.Properties"

# The properties an overlay shows; everything else is ignored.
SHOWN = ("Name", "State", "Fen", "Moves", "WhiteTimeMs", "BlackTimeMs", "ClockRunning",
         "Claims", "Result", "Termination", "Pgn")


def plain(value):
    """D-Bus values as plain Python values (dbus.String -> str, dbus.Array -> list, ...)."""
    if isinstance(value, (dbus.Array, list)):
        return [plain(v) for v in value]
    if isinstance(value, (dbus.Struct, tuple)):
        return [plain(v) for v in value]
    if isinstance(value, (dbus.Dictionary, dict)):
        return {str(k): plain(v) for k, v in value.items()}
    if isinstance(value, dbus.Boolean):
        return bool(value)
    if isinstance(value, (dbus.String, dbus.ObjectPath)):
        return str(value)
    if isinstance(value, (dbus.Byte, dbus.Int16, dbus.UInt16, dbus.Int32, dbus.UInt32,
                          dbus.Int64, dbus.UInt64)):
        return int(value)
    return value


def clock(ms):
    s = int(ms) // 1000
    return "%d:%02d:%02d" % (s // 3600, s // 60 % 60, s % 60)


def tag(pgn, key):
    m = re.search(r'^\[%s "(.*)"\]$' % re.escape(key), pgn or "", re.M)
    return m.group(1) if m else ""


class Overlay:
    def __init__(self, bus, wanted, out):
        self.bus = bus
        self.wanted = set(wanted)
        self.out = out
        self.boards = {}  # object path -> properties shown

    def watched(self, path, props):
        if not self.wanted:
            return True
        return props.get("Name") in self.wanted or path.rsplit("/", 1)[-1] in self.wanted

    def add(self, path, props):
        props = {k: plain(v) for k, v in props.items() if k in SHOWN}
        if self.watched(path, props):
            self.boards[path] = props
            self.emit(path, "board")

    def state(self, path):
        p = self.boards[path]
        return {
            "board": p.get("Name", ""),
            "white": tag(p.get("Pgn"), "White"),
            "black": tag(p.get("Pgn"), "Black"),
            "moves": p.get("Moves", []),
            "last_move": (p.get("Moves") or [""])[-1],
            "white_clock": clock(p.get("WhiteTimeMs", 0)),
            "black_clock": clock(p.get("BlackTimeMs", 0)),
            "clock_running": p.get("ClockRunning", "none"),
            "claims": [{"player": c[0], "kind": c[1], "detail": c[2]}
                       for c in p.get("Claims", [])],
            "result": p.get("Result", "*"),
            "termination": p.get("Termination", ""),
        }

    def emit(self, path, why):
        # The file first: whoever reads the line can rely on the file being as new.
        if self.out:
            everything = [self.state(p) for p in sorted(self.boards)]
            directory = os.path.dirname(os.path.abspath(self.out))
            with tempfile.NamedTemporaryFile("w", dir=directory, delete=False,
                                             encoding="utf-8") as f:
                json.dump(everything, f, ensure_ascii=False)
            os.replace(f.name, self.out)
        line = dict(self.state(path), event=why)
        print(json.dumps(line, ensure_ascii=False), flush=True)

    # Signal handlers. `path` comes from the message header (path_keyword).

    def on_interfaces_added(self, path, interfaces):
        if BOARD_IFACE in interfaces:
            self.add(str(path), interfaces[BOARD_IFACE])

    def on_interfaces_removed(self, path, interfaces):
        if BOARD_IFACE in interfaces and str(path) in self.boards:
            del self.boards[str(path)]

    def on_properties_changed(self, interface, changed, invalidated, path=None):
        if interface != BOARD_IFACE or path not in self.boards:
            return
        shown = {k: plain(v) for k, v in changed.items() if k in SHOWN}
        if shown:
            self.boards[path].update(shown)
            self.emit(path, "changed:" + ",".join(sorted(shown)))

    def on_move_played(self, ply, san, uci, fen, white_ms, black_ms, path=None):
        if path not in self.boards:
            return
        p = self.boards[path]
        # The signal carries the clocks at the move; the Moves property follows it.
        moves = list(p.get("Moves", []))
        if len(moves) < int(ply):
            moves = moves[: int(ply) - 1] + [str(san)]
        p.update(Moves=moves, Fen=str(fen), WhiteTimeMs=int(white_ms),
                 BlackTimeMs=int(black_ms))
        self.emit(path, "move")

    def on_flag_fell(self, player, path=None):
        if path in self.boards:
            self.emit(path, "flag:" + str(player))

    def on_game_ended(self, result, termination, path=None):
        if path in self.boards:
            self.boards[path].update(Result=str(result), Termination=str(termination))
            self.emit(path, "ended")


def connect(bus):
    if bus == "system":
        return dbus.SystemBus()
    if bus == "session":
        return dbus.SessionBus()
    return dbus.bus.BusConnection(bus)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--bus", default="system", help="system, session or a D-Bus address")
    parser.add_argument("--out", help="also keep this JSON file up to date")
    parser.add_argument("boards", nargs="*", help="board names or ids (default: all)")
    args = parser.parse_args()

    dbus.mainloop.glib.DBusGMainLoop(set_as_default=True)
    bus = connect(args.bus)
    overlay = Overlay(bus, args.boards, args.out)

    # Subscribe first, then read the boards: nothing happening in between is lost.
    bus.add_signal_receiver(overlay.on_interfaces_added, "InterfacesAdded", OM_IFACE,
                            BUS_NAME, MANAGER)
    bus.add_signal_receiver(overlay.on_interfaces_removed, "InterfacesRemoved", OM_IFACE,
                            BUS_NAME, MANAGER)
    bus.add_signal_receiver(overlay.on_properties_changed, "PropertiesChanged", PROPS_IFACE,
                            BUS_NAME, path_keyword="path")
    for member, handler in (("MovePlayed", overlay.on_move_played),
                            ("FlagFell", overlay.on_flag_fell),
                            ("GameEnded", overlay.on_game_ended)):
        bus.add_signal_receiver(handler, member, BOARD_IFACE, BUS_NAME, path_keyword="path")

    try:
        manager = bus.get_object(BUS_NAME, MANAGER)
        objects = manager.GetManagedObjects(dbus_interface=OM_IFACE)
    except dbus.exceptions.DBusException as e:
        print("overlay: eboardd is not reachable on the %s bus: %s" % (args.bus, e),
              file=sys.stderr)
        return 1
    for path, interfaces in sorted(objects.items()):
        if BOARD_IFACE in interfaces:
            overlay.add(str(path), interfaces[BOARD_IFACE])

    loop = GLib.MainLoop()
    for sig in (signal.SIGINT, signal.SIGTERM):
        GLib.unix_signal_add(GLib.PRIORITY_DEFAULT, sig, loop.quit)
    loop.run()
    return 0


if __name__ == "__main__":
    sys.exit(main())
