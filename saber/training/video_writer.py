"""The one video writer of saber: ``uint8`` RGB frames piped to ffmpeg one at a time, so memory
stays bounded; the MP4 appears under its name whole or not at all.
"""

from __future__ import annotations

import collections
import contextlib
import errno
import os
import subprocess
import threading
from fractions import Fraction
from pathlib import Path
from typing import Any

import numpy as np

from saber.errors import SaberError, VideoWriteError, os_error_message
from saber.protocol.settings import FRAMES_PER_SECOND
from saber.rundir.durable import writing_atomically


def require_video_extra() -> Any:
    """The ``imageio_ffmpeg`` module, or a :class:`SaberError` naming the extra to install."""
    try:
        import imageio_ffmpeg
    except ImportError:
        raise SaberError(
            'Recording videos needs the "video" extra (imageio-ffmpeg): pip install '
            '"saber-ale[video]" or, from a checkout, pip install ".[video]"'
        ) from None
    return imageio_ffmpeg


class VideoWriter:
    """Stream ``uint8`` RGB frames (H, W, 3) into an H.264 MP4 file, one frame at a time.

    The file appears under its name only when :meth:`close` succeeds: ffmpeg writes
    ``<name>.tmp`` (:func:`saber.rundir.writing_atomically`), which is renamed
    only once ffmpeg has exited with status 0. ffmpeg's own exit status is checked, not
    only the pipe: on a full disk ffmpeg can take every frame and still fail to write
    the MP4 index (``moov atom``) at the end, leaving a file no player opens.

    Args:
        path: the ``.mp4`` file to write (parent folders are created).
        fps: frames per second of playback.
    """

    def __init__(self, path: str | Path, fps: float = FRAMES_PER_SECOND) -> None:
        self._ffmpeg = require_video_extra()
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.fps = fps
        self.frames = 0
        self._process: subprocess.Popen[bytes] | None = None
        self._errors: collections.deque[str] = collections.deque(maxlen=5)
        self._size: tuple[int, int] | None = None
        self._reader: threading.Thread | None = None  # keeps ffmpeg's stderr in _errors
        self._writing: contextlib.AbstractContextManager[Path] | None = writing_atomically(
            self.path
        )
        self.partial = self._writing.__enter__()  # <name>.tmp, renamed by close()

    def write(self, frame: np.ndarray) -> None:
        """Append one frame; every frame must have the first one's size.

        Raises:
            VideoWriteError: ffmpeg stopped (its last words in the message).
        """
        frame = np.ascontiguousarray(frame, dtype=np.uint8)
        height, width = frame.shape[:2]
        if self._process is None:
            self._size = (width, height)
            self._process = self._start(width, height)
        elif (width, height) != self._size:
            raise ValueError(f"Expect frames of {self._size} (w, h), actually: {(width, height)}")
        assert self._process.stdin is not None
        try:
            self._process.stdin.write(memoryview(frame).cast("B"))
        except (BrokenPipeError, OSError):
            self._process.wait()
            raise self._failure() from None
        self.frames += 1

    def _start(self, width: int, height: int) -> subprocess.Popen[bytes]:
        """ffmpeg, reading raw RGB frames on stdin (the settings imageio-ffmpeg would pass
        for quality 8: CRF 10, sharp pixel art in small files); its errors are kept."""
        command = [
            self._ffmpeg.get_ffmpeg_exe(), "-y", "-loglevel", "error", "-nostdin",
            "-f", "rawvideo", "-vcodec", "rawvideo", "-s", f"{width}x{height}",
            "-pix_fmt", "rgb24", "-r", str(Fraction(self.fps).limit_denominator()),
            "-i", "-", "-an", "-vcodec", "libx264", "-pix_fmt", "yuv420p", "-crf", "10",
            "-preset", "veryfast", "-f", "mp4", str(self.partial),
        ]  # fmt: skip
        try:  # a place saber may not write is said in the system's words, not ffmpeg's
            self.partial.touch()
        except OSError as error:
            raise OSError(error.errno, error.strerror, str(self.path)) from None
        process = subprocess.Popen(command, stdin=subprocess.PIPE, stderr=subprocess.PIPE)
        self._reader = threading.Thread(target=self._keep_errors, args=(process,), daemon=True)
        self._reader.start()
        return process

    def _keep_errors(self, process: subprocess.Popen[bytes]) -> None:
        """Read ffmpeg's stderr as it comes (a full pipe would stall it), keeping the end."""
        assert process.stderr is not None
        for line in process.stderr:
            self._errors.append(line.decode("utf-8", "replace").strip())

    def _failure(self) -> VideoWriteError:
        """The error of a failed ffmpeg, naming the video (the temporary file is removed)."""
        assert self._process is not None
        status = self._process.returncode
        if self._reader is not None:  # ffmpeg has exited: its last words are on their way
            self._reader.join(timeout=5)
        said = "; ".join(line for line in self._errors if line) or f"exit status {status}"
        self._abandon()
        for code in (
            errno.ENOSPC,
            errno.EDQUOT,
            errno.EROFS,
            errno.EACCES,
            errno.EPERM,
            errno.EFBIG,
        ):
            if os.strerror(code) in said:  # a file-system error: say what to do about it
                return VideoWriteError(
                    os_error_message(OSError(code, os.strerror(code), str(self.path)))
                )
        return VideoWriteError(f"Cannot write {self.path}: ffmpeg failed ({said[-300:]})")

    def close(self) -> Path | None:
        """Finish the file; returns its path, or None when no frame was written.

        Raises:
            VideoWriteError: ffmpeg failed; no file is left under the video's name.
        """
        if self._process is None:
            self._abandon()
            return None
        process, self._process = self._process, None
        assert process.stdin is not None
        with contextlib.suppress(OSError):  # a broken pipe: the exit status says why
            process.stdin.close()
        status = process.wait()
        if status != 0:
            self._process = process
            raise self._failure()
        writing, self._writing = self._writing, None
        assert writing is not None
        writing.__exit__(None, None, None)  # fsync, rename (an OSError: nothing kept)
        return self.path

    def abort(self) -> None:
        """Stop without keeping the file."""
        if self._process is not None:
            process, self._process = self._process, None
            with contextlib.suppress(OSError):
                process.kill()
            process.wait()
        self._abandon()

    def _abandon(self) -> None:
        """Remove the temporary file (once)."""
        if self._writing is not None:
            writing, self._writing = self._writing, None
            writing.__exit__(_Abandoned, _Abandoned(), None)
        self._process = None

    def __enter__(self) -> VideoWriter:
        return self

    def __exit__(self, exc_type: object, *rest: object) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()


class _Abandoned(Exception):
    """Thrown into :func:`writing_atomically` to drop a video's temporary file."""
