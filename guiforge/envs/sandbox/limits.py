"""Resource limits for sandboxed processes, applied as rlimits by ``prlimit`` right before
``bwrap`` runs, so every process in the sandbox inherits them."""

from __future__ import annotations

from dataclasses import dataclass

MiB = 1024 * 1024
GiB = 1024 * MiB


@dataclass(frozen=True)
class Limits:
    """Per-process rlimits plus the sizes of the sandbox's private tmpfs mounts.

    ``None`` leaves a limit as inherited. ``nproc`` counts every task of the sandbox user
    (threads included), which is why each sandbox gets its own host uid when run as root.
    """

    cpu_s: int | None = 60  # RLIMIT_CPU: SIGXCPU, then SIGKILL one second later
    memory_bytes: int | None = 2 * GiB  # RLIMIT_AS: address space per process
    nproc: int | None = 256  # RLIMIT_NPROC: tasks of the sandbox user
    file_bytes: int | None = 256 * MiB  # RLIMIT_FSIZE: largest file a process may write
    open_files: int | None = 1024  # RLIMIT_NOFILE
    core_bytes: int | None = 0  # RLIMIT_CORE: no core dumps in the workspace
    tmp_bytes: int = 64 * MiB  # size of the sandbox's private /tmp and /dev/shm
    output_bytes: int = 256 * 1024  # captured output kept per stream per command

    def prlimit_argv(self, nproc_extra: int = 0) -> list[str]:
        """``prlimit`` arguments that set soft = hard for every limit given."""
        cpu = None if self.cpu_s is None else f"{self.cpu_s}:{self.cpu_s + 1}"
        pairs = {
            # a soft limit below the hard one sends SIGXCPU first, SIGKILL at the hard limit
            "--cpu": cpu,
            "--as": self.memory_bytes,
            "--nproc": None if self.nproc is None else self.nproc + nproc_extra,
            "--fsize": self.file_bytes,
            "--nofile": self.open_files,
            "--core": self.core_bytes,
        }
        args = [f"{flag}={value}" for flag, value in pairs.items() if value is not None]
        return ["prlimit", *args, "--"] if args else []


# LibreOffice maps far more address space than it uses and runs dozens of threads; the GUI
# process gets no address-space cap, only the shared process count and file size.
GUI_LIMITS = Limits(cpu_s=None, memory_bytes=None, nproc=None, open_files=4096)
