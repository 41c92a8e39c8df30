"""The seccomp filter the worker runs under: system calls an answer never needs fail.

bwrap loads a compiled BPF program (``bwrap --seccomp FD``) just before it starts the
worker. The program is built here with libseccomp, the library bwrap's own users
(Flatpak, systemd) build theirs with, through :mod:`ctypes`: rules are written with
system call *names*, and the library turns them into numbers for this machine's
architecture, rejects calls made through another ABI (32-bit calls on x86-64 end the
process), and writes the program.

What is refused, with ``EPERM``: changing mounts or the root, namespaces (``unshare``,
``setns``, ``clone`` with a namespace flag), looking into other processes (``ptrace``,
``process_vm_*``, ``kcmp``, ``pidfd_getfd``), kernel keys, BPF, perf events,
``userfaultfd``, ``io_uring``, kernel modules, ``kexec``, clocks, swap, reboot, the
kernel log, quotas and port I/O. ``clone3`` fails with ``ENOSYS``: its flags are in
memory a filter cannot read, so the C library falls back to ``clone``, whose flags it
can. Nothing else changes: NumPy, threads and ``fork`` work as usual.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import errno
import functools
import os

DENIED = (
    "mount umount umount2 pivot_root chroot move_mount open_tree fsopen fsconfig fsmount "
    "fspick mount_setattr unshare setns ptrace process_vm_readv process_vm_writev kcmp "
    "pidfd_getfd keyctl add_key request_key bpf perf_event_open userfaultfd io_uring_setup "
    "io_uring_enter io_uring_register init_module finit_module delete_module kexec_load "
    "kexec_file_load open_by_handle_at name_to_handle_at swapon swapoff reboot syslog acct "
    "quotactl quotactl_fd ioperm iopl settimeofday clock_settime clock_adjtime adjtimex "
    "sethostname setdomainname lookup_dcookie vhangup uselib migrate_pages move_pages"
).split()
NO_SYSCALL = ("clone3",)  # ENOSYS: the C library then uses clone
CLONE_NAMESPACES = {  # a clone() with any of these flags is refused
    "CLONE_NEWNS": 0x00020000,
    "CLONE_NEWCGROUP": 0x02000000,
    "CLONE_NEWUTS": 0x04000000,
    "CLONE_NEWIPC": 0x08000000,
    "CLONE_NEWUSER": 0x10000000,
    "CLONE_NEWPID": 0x20000000,
    "CLONE_NEWNET": 0x40000000,
}
ALLOW = 0x7FFF0000  # SCMP_ACT_ALLOW
MASKED_EQ = 7  # SCMP_CMP_MASKED_EQ: (argument & a) == b


class Unavailable(Exception):
    """libseccomp cannot be loaded, or refused to build the filter."""


class _ArgCmp(ctypes.Structure):  # struct scmp_arg_cmp
    _fields_ = [
        ("arg", ctypes.c_uint),
        ("op", ctypes.c_int),
        ("datum_a", ctypes.c_uint64),
        ("datum_b", ctypes.c_uint64),
    ]


def _errno(code: int) -> int:
    return 0x00050000 | (code & 0xFFFF)  # SCMP_ACT_ERRNO(code)


@functools.cache
def _library() -> ctypes.CDLL:
    name = ctypes.util.find_library("seccomp") or "libseccomp.so.2"
    try:
        lib = ctypes.CDLL(name, use_errno=True)
    except OSError:
        raise Unavailable(
            "libseccomp is not installed (Debian/Ubuntu: apt-get install libseccomp2); "
            "the grader builds the sandbox's system-call filter with it"
        ) from None
    lib.seccomp_init.restype = ctypes.c_void_p
    lib.seccomp_init.argtypes = [ctypes.c_uint32]
    lib.seccomp_rule_add_array.argtypes = [
        ctypes.c_void_p,
        ctypes.c_uint32,
        ctypes.c_int,
        ctypes.c_uint,
        ctypes.POINTER(_ArgCmp),
    ]
    lib.seccomp_syscall_resolve_name.argtypes = [ctypes.c_char_p]
    lib.seccomp_export_bpf.argtypes = [ctypes.c_void_p, ctypes.c_int]
    lib.seccomp_release.argtypes = [ctypes.c_void_p]
    return lib


def number(name: str) -> int | None:
    """The system call's number on this machine, or None where it does not exist."""
    nr = _library().seccomp_syscall_resolve_name(name.encode())
    return None if nr < 0 else nr


@functools.cache
def program() -> bytes:
    """The compiled filter (classic BPF), as ``bwrap --seccomp`` reads it."""
    lib = _library()
    ctx = lib.seccomp_init(ALLOW)
    if not ctx:
        raise Unavailable("libseccomp could not start a filter")
    try:
        rules = [(name, _errno(errno.EPERM), []) for name in DENIED]
        rules += [(name, _errno(errno.ENOSYS), []) for name in NO_SYSCALL]
        rules += [
            ("clone", _errno(errno.EPERM), [_ArgCmp(0, MASKED_EQ, flag, flag)])
            for flag in CLONE_NAMESPACES.values()
        ]
        for name, action, args in rules:
            nr = number(name)
            if nr is None:
                continue  # not on this architecture (umount, ioperm...)
            array = (_ArgCmp * len(args))(*args) if args else None
            if lib.seccomp_rule_add_array(ctx, action, nr, len(args), array) < 0:
                raise Unavailable(f"libseccomp refused the rule for {name}")
        fd = os.memfd_create("attention-grader-seccomp", os.MFD_CLOEXEC)
        try:
            if lib.seccomp_export_bpf(ctx, fd) < 0:
                raise Unavailable("libseccomp could not write the filter")
            return os.pread(fd, os.fstat(fd).st_size, 0)
        finally:
            os.close(fd)
    finally:
        lib.seccomp_release(ctx)


def file_descriptor() -> int:
    """A new descriptor to read the filter from (bwrap reads it once, then closes it)."""
    fd = os.memfd_create("attention-grader-seccomp", os.MFD_CLOEXEC)
    os.write(fd, program())
    os.lseek(fd, 0, os.SEEK_SET)
    return fd
