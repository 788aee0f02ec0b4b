"""What the benchmark drivers print about the machine they ran on."""
import platform


def cpu_name() -> str:
    """The CPU's model name from /proc/cpuinfo (platform's guess where there is none)."""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown CPU"
