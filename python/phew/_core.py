"""The compiled module, the context of a call (threads, communicator, progress, Ctrl-C) and
the core's status codes as Python exceptions."""
import contextlib

import numpy as np

from ._ffi import ffi, lib


class Error(RuntimeError):
    """A failure of the phew library that no built-in exception names (MPI)."""


class Cancelled(Exception):
    """The progress callback asked to stop (it returned False)."""


_EXCEPTIONS = {
    lib.PHEW_ERROR_ARGUMENT: ValueError,
    lib.PHEW_ERROR_DATA: ValueError,
    lib.PHEW_ERROR_MEMORY: MemoryError,
    lib.PHEW_ERROR_MPI: Error,
    lib.PHEW_ERROR_IO: OSError,
}


class Call:
    """One call into the library: its phew_context and what the callbacks saw.

    progress(fraction, stage) is called on the calling thread between pieces of work; if it
    returns False the run stops (Cancelled). Ctrl-C stops the run too (KeyboardInterrupt):
    the core asks its cancel callback at every stage and inside its loops, and that callback,
    Python code on the main thread, is where the interpreter delivers the signal.
    """

    def __init__(self, threads=0, comm=None, progress=None):
        self.context = ffi.new("phew_context *")
        lib.phew_context_init(self.context)
        self.context.n_threads = _threads(threads)
        self._comm = _comm_address(comm)
        if self._comm is not None:
            self.context.mpi_comm = self._comm
        if progress is not None and not callable(progress):
            raise TypeError("progress must be a function progress(fraction, stage), not %r" % (progress,))
        self._progress = progress
        self._handle = ffi.new_handle(self)
        self.context.progress = lib.phew_python_progress
        self.context.progress_data = self._handle
        self.context.cancel = lib.phew_python_cancel
        self.context.cancel_data = self._handle
        self.interrupt = None  # the KeyboardInterrupt (or other exception) seen in a callback
        self.stop = False
        rank, size = ffi.new("int *"), ffi.new("int *")
        self.check(lib.phew_context_ranks(self.context, rank, size))
        self.rank, self.n_ranks = rank[0], size[0]

    def check(self, status):
        """Raise for a status other than PHEW_OK, with the core's message; and for an
        exception raised in a callback (Ctrl-C) even if the run got to its end."""
        if self.interrupt is not None:
            raise self.interrupt
        if status == lib.PHEW_OK:
            return
        message = ffi.string(self.context.message).decode("utf-8", "replace")
        if status == lib.PHEW_CANCELLED:
            raise Cancelled(message or "stopped by the progress callback")
        raise _EXCEPTIONS.get(status, Error)(message or ffi.string(lib.phew_status_string(status)).decode())


    @contextlib.contextmanager
    def agreeing(self):
        """Checks of this rank's own input, agreed by every rank of the communicator before a
        collective call: a problem on one rank raises on all (the lowest rank's message),
        instead of leaving the others waiting in the call."""
        mine = None
        try:
            yield
        except (TypeError, ValueError, MemoryError, OverflowError) as e:
            mine = e
        status = lib.PHEW_OK
        if mine is not None:
            status = lib.PHEW_ERROR_MEMORY if isinstance(mine, MemoryError) else lib.PHEW_ERROR_ARGUMENT
            text = str(mine).encode("utf-8", "replace")[: ffi.sizeof(self.context.message) - 1]
            ffi.memmove(self.context.message, text + b"\0", len(text) + 1)
        agreed = lib.phew_agree(self.context, status)
        if agreed == lib.PHEW_OK:
            return
        if mine is not None:
            raise mine
        message = ffi.string(self.context.message).decode("utf-8", "replace")
        raise _EXCEPTIONS.get(agreed, Error)("another rank: " + message)


def mpi_max():
    """mpi4py's MPI.MAX, for the counts the finders agree on over a communicator."""
    from mpi4py import MPI

    return MPI.MAX


def _threads(threads):
    if isinstance(threads, bool) or not isinstance(threads, (int, np.integer)) or threads < 0:
        raise ValueError("threads must be an integer >= 0 (0: every core), not %r" % (threads,))
    if threads > 2**31 - 1:
        raise ValueError("threads %d is too large" % threads)
    return int(threads)


def _comm_address(comm):
    """The address of an mpi4py communicator's MPI_Comm handle, kept alive by comm."""
    if comm is None:
        return None
    try:
        from mpi4py import MPI
    except ImportError as e:
        raise ValueError("comm= needs mpi4py (Debian: python3-mpi4py)") from e
    if not isinstance(comm, MPI.Comm):
        raise ValueError("comm must be an mpi4py communicator, not %s" % type(comm).__name__)
    if not lib.phew_has_mpi():
        raise Error("this phew library was built without MPI; comm= cannot be used")
    return ffi.cast("void *", MPI._addressof(comm))


def _progress_failed(*args):
    _callback_failed(*args)


def _cancel_failed(*args):
    _callback_failed(*args)
    return 1


@ffi.def_extern(onerror=_progress_failed)
def phew_python_progress(fraction, stage, user_data):
    call = ffi.from_handle(user_data)
    if call._progress is not None and call.interrupt is None and not call.stop:
        if call._progress(fraction, ffi.string(stage).decode()) is False:
            call.stop = True


@ffi.def_extern(onerror=_cancel_failed)
def phew_python_cancel(user_data):
    call = ffi.from_handle(user_data)
    return 1 if call.stop or call.interrupt is not None else 0


def _callback_failed(exception_type, value, traceback):
    """An exception inside a callback (Ctrl-C, or the user's progress function raised): kept
    to be raised when the call returns, and the run asked to stop (at once from the cancel
    callback, which then returns 1; from the progress callback at the next cancel check)."""
    handle = traceback.tb_frame.f_locals.get("user_data") if traceback is not None else None
    if handle is not None:
        call = ffi.from_handle(handle)
        if call.interrupt is None:
            call.interrupt = value
    return None
