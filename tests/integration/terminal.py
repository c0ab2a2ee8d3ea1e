"""Runs a command on a terminal of its own (a real pty) and answers a confirmation on it.

    python3 terminal.py WHO ANSWER COMMAND...

WHO is `below` (the pty is made by this process, so whatever is above it is above the
command too: an agent driving a terminal it made) or `person` (this process first leaves
its parents: a double fork and setsid, and the command runs only once the process that
started it is no longer above it, as in a person's own terminal). ANSWER is what is typed
when `Type NNNN to confirm` appears: `code` (the code shown), `wrong`, or `eof`. Prints what
the terminal showed and exits with the command's exit code.
"""
import json
import os
import pty
import re
import select
import sys
import time


def on_terminal(answer, argv):
    pid, fd = pty.fork()
    if pid == 0:
        os.execvp(argv[0], argv)
    shown, typed = b"", False
    deadline = time.time() + 120
    while time.time() < deadline:
        ready, _, _ = select.select([fd], [], [], 1)
        if not ready:
            continue
        try:
            data = os.read(fd, 4096)
        except OSError:
            data = b""
        if not data:
            break
        shown += data
        asked = re.search(rb"Type (\d{4}) to confirm", shown)
        if asked and not typed:
            typed = True
            reply = {"code": asked.group(1) + b"\n", "wrong": b"0000x\n", "eof": b"\x04"}
            os.write(fd, reply[answer])
    _, status = os.waitpid(pid, 0)
    return shown.decode(errors="replace"), os.waitstatus_to_exitcode(status)


def detached(answer, argv):
    read_end, write_end = os.pipe()
    middle = os.fork()
    if middle == 0:
        os.close(read_end)
        os.setsid()
        middle_pid = os.getpid()
        if os.fork() != 0:
            os._exit(0)
        while os.getppid() == middle_pid:
            time.sleep(0.01)
        shown, code = on_terminal(answer, argv)
        os.write(write_end, json.dumps([shown, code]).encode())
        os._exit(0)
    os.close(write_end)
    os.waitpid(middle, 0)
    data = b""
    while True:
        chunk = os.read(read_end, 65536)
        if not chunk:
            break
        data += chunk
    return json.loads(data)


def main():
    who, answer, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
    shown, code = (detached if who == "person" else on_terminal)(answer, argv)
    sys.stdout.write(shown)
    sys.exit(code)


main()
