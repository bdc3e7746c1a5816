"""The seccomp filter of a sandboxed bot, compiled with libseccomp (via ctypes) to classic BPF.

A bot needs one socket family, AF_UNIX, to reach the referee. Everything else the filter
refuses is either a way around the network namespace (other socket families, io_uring,
which opens sockets without the socket() system call) or kernel surface a bot has no use
for (new namespaces, mounts, keyrings, BPF, perf, ptrace, modules). Refused calls fail with
an errno, so a runtime that probes (gRPC asks for an IPv6 socket) carries on; a system call
of another architecture (32-bit ``int 0x80``) kills the process.

bubblewrap loads the compiled program (``bwrap --seccomp FD``) right before it executes the
bot, so bubblewrap's own set-up is not filtered.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os
import socket

SCMP_ACT_ALLOW = 0x7FFF0000
SCMP_ACT_ERRNO = 0x00050000
SCMP_CMP_NE = 1
SCMP_CMP_EQ = 4
SCMP_CMP_GE = 5
SCMP_CMP_MASKED_EQ = 7
FAMILIES = 64
"""Socket families are small numbers (AF_MAX is 46 on Linux 6): each is allowed or refused
by a rule of its own, and every number from here on is refused."""
NETWORK_FAMILIES = (socket.AF_UNIX, socket.AF_INET, socket.AF_INET6)
"""What a build step allowed on the network may open (in its own network namespace)."""

CLONE_NAMESPACE_FLAGS = (
    0x00020000,  # CLONE_NEWNS
    0x02000000,  # CLONE_NEWCGROUP
    0x04000000,  # CLONE_NEWUTS
    0x08000000,  # CLONE_NEWIPC
    0x10000000,  # CLONE_NEWUSER
    0x20000000,  # CLONE_NEWPID
    0x40000000,  # CLONE_NEWNET
)

REFUSED = {
    # Namespaces and mounts: the sandbox is fixed once the bot starts.
    "unshare": errno.EPERM, "setns": errno.EPERM, "mount": errno.EPERM,
    "umount2": errno.EPERM, "pivot_root": errno.EPERM, "chroot": errno.EPERM,
    "open_tree": errno.EPERM, "move_mount": errno.EPERM, "fsopen": errno.EPERM,
    "fsmount": errno.EPERM, "fsconfig": errno.EPERM, "fspick": errno.EPERM,
    "mount_setattr": errno.EPERM,
    # clone3 passes its flags in memory a filter cannot read: ENOSYS makes libc use clone.
    "clone3": errno.ENOSYS,
    # io_uring can create sockets and open files without the filtered system calls.
    "io_uring_setup": errno.EPERM, "io_uring_enter": errno.EPERM,
    "io_uring_register": errno.EPERM,
    # Kernel surface with no use to a bot.
    "keyctl": errno.EPERM, "add_key": errno.EPERM, "request_key": errno.EPERM,
    "bpf": errno.EPERM, "perf_event_open": errno.EPERM, "userfaultfd": errno.EPERM,
    "ptrace": errno.EPERM, "process_vm_readv": errno.EPERM,
    "process_vm_writev": errno.EPERM, "kcmp": errno.EPERM, "pidfd_getfd": errno.EPERM,
    "name_to_handle_at": errno.EPERM, "open_by_handle_at": errno.EPERM,
    "fanotify_init": errno.EPERM, "lookup_dcookie": errno.EPERM, "syslog": errno.EPERM,
    "acct": errno.EPERM, "quotactl": errno.EPERM, "swapon": errno.EPERM,
    "swapoff": errno.EPERM, "reboot": errno.EPERM, "kexec_load": errno.EPERM,
    "kexec_file_load": errno.EPERM, "init_module": errno.EPERM,
    "finit_module": errno.EPERM, "delete_module": errno.EPERM,
}


LOCK_COMMANDS = (5, 6, 7, 36, 37, 38, 1024)
"""fcntl's F_GETLK, F_SETLK, F_SETLKW, F_OFD_GETLK, F_OFD_SETLK, F_OFD_SETLKW, F_SETLEASE."""


class SeccompUnavailable(RuntimeError):
    """libseccomp is missing (Debian package ``libseccomp2``) or refused the filter."""


class _ArgCmp(ctypes.Structure):
    _fields_ = [("arg", ctypes.c_uint), ("op", ctypes.c_int),
                ("datum_a", ctypes.c_uint64), ("datum_b", ctypes.c_uint64)]


def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        library = ctypes.CDLL(name, use_errno=True)
    except OSError as error:
        raise SeccompUnavailable(f"libseccomp not found ({error}); install the Debian "
                                 "package libseccomp2") from None
    library.seccomp_init.restype = ctypes.c_void_p
    library.seccomp_init.argtypes = [ctypes.c_uint32]
    library.seccomp_release.argtypes = [ctypes.c_void_p]
    library.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    library.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p, ctypes.c_uint32, ctypes.c_int, ctypes.c_uint, ctypes.POINTER(_ArgCmp)]
    library.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    return library


def _add(library: ctypes.CDLL, context: int, action: int, name: str,
         comparisons: tuple[tuple[int, int, int, int], ...] = ()) -> None:
    number = library.seccomp_syscall_resolve_name(name.encode())
    if number < 0:  # not a system call on this architecture (or unknown to this libseccomp)
        return
    array = (_ArgCmp * max(1, len(comparisons)))(*(_ArgCmp(*c) for c in comparisons))
    result = library.seccomp_rule_add_array(context, action, number, len(comparisons), array)
    if result < 0:
        raise SeccompUnavailable(f"libseccomp refused the rule for {name}: "
                                 f"{os.strerror(-result)}")


@functools.cache
def bot_filter() -> bytes:
    """The compiled filter (classic BPF, for ``bwrap --seccomp``); SeccompUnavailable if it
    cannot be built here."""
    return _compile((socket.AF_UNIX,), refuse_locks=True)


@functools.cache
def build_filter(network: bool) -> bytes:
    """The filter of a build step: the bot's, with file locks (compilers and package
    managers lock their caches), and AF_INET and AF_INET6 sockets too when the build may
    reach the network (through its own namespace, see ``network.py``)."""
    return _compile(NETWORK_FAMILIES if network else (socket.AF_UNIX,), refuse_locks=False)


def _compile(families: tuple[int, ...], refuse_locks: bool) -> bytes:
    library = _library()
    context = library.seccomp_init(SCMP_ACT_ALLOW)
    if not context:
        raise SeccompUnavailable("seccomp_init failed")
    try:
        refuse_family = SCMP_ACT_ERRNO | errno.EAFNOSUPPORT
        for name in ("socket", "socketpair"):
            if families == (socket.AF_UNIX,):
                _add(library, context, refuse_family, name,
                     ((0, SCMP_CMP_NE, socket.AF_UNIX, 0),))
                continue
            for family in range(FAMILIES):
                if family not in families:
                    _add(library, context, refuse_family, name,
                         ((0, SCMP_CMP_EQ, family, 0),))
            _add(library, context, refuse_family, name, ((0, SCMP_CMP_GE, FAMILIES, 0),))
        for flag in CLONE_NAMESPACE_FLAGS:
            _add(library, context, SCMP_ACT_ERRNO | errno.EPERM, "clone",
                 ((0, SCMP_CMP_MASKED_EQ, flag, flag),))
        for name, code in REFUSED.items():
            _add(library, context, SCMP_ACT_ERRNO | code, name)
        if refuse_locks:
            # Locks on files two bots share (the runtimes, a bot folder two seats of one bot
            # read) would be a channel between them: a lock taken by one is seen by the
            # other, frozen or not. No runtime a bot uses needs one (its tmpfs is its own).
            _add(library, context, SCMP_ACT_ERRNO | errno.ENOLCK, "flock")
            for name in ("fcntl", "fcntl64"):
                for command in LOCK_COMMANDS:
                    _add(library, context, SCMP_ACT_ERRNO | errno.ENOLCK, name,
                         ((1, SCMP_CMP_EQ, command, 0),))
        read_end, write_end = os.pipe()
        try:
            result = library.seccomp_export_bpf(context, write_end)
            os.close(write_end)
            write_end = -1
            if result < 0:
                raise SeccompUnavailable(f"seccomp_export_bpf failed: {os.strerror(-result)}")
            chunks = []
            while chunk := os.read(read_end, 65536):
                chunks.append(chunk)
        finally:
            os.close(read_end)
            if write_end >= 0:
                os.close(write_end)
        return b"".join(chunks)
    finally:
        library.seccomp_release(context)


def describe(network: bool = False) -> str:
    families = "AF_UNIX, AF_INET and AF_INET6 sockets" if network else "AF_UNIX sockets only"
    return (f"{families}; no file locks, io_uring, new namespaces, mounts, ptrace, keyrings, "
            "BPF or perf; other architectures' system calls kill")
