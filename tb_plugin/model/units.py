"""Units of time, defined once: the model keeps integer nanoseconds (the traces' microseconds, read exactly), the
routes answer in microseconds, and a few figures read in milliseconds or seconds."""

NS_PER_US = 1000.0
NS_PER_S = 1e9
US_PER_MS = 1000.0
US_PER_SECOND = 1e6
