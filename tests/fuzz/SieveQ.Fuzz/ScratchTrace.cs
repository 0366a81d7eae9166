using System.Runtime.InteropServices;

namespace SieveQ.Fuzz;

internal static class ScratchTrace
{
    private const int MapBytes = 1 << 16;

    public static unsafe void Install()
    {
        if (SharpFuzz.Common.Trace.SharedMem == null)
        {
            // Never freed: Fuzzer.Run swaps in afl's map, but instrumented code may still hold the pointer.
            SharpFuzz.Common.Trace.SharedMem = (byte*)NativeMemory.AllocZeroed(MapBytes);
        }
    }
}
