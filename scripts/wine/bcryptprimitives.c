/* Wine 8 (Debian 12's) lacks bcryptprimitives.dll, which every Windows since 10 has and Rust's
 * standard library imports for its random numbers (ProcessPrng). make release-check builds this
 * stand-in with zig into its own wine prefix only, so the Windows build runs there unchanged;
 * nothing of it is released. */
#include <windows.h>
#include <ntsecapi.h>

__declspec(dllexport) BOOL WINAPI ProcessPrng(PBYTE data, SIZE_T length) {
    while (length > 0) {
        ULONG chunk = length > 0x40000000 ? 0x40000000 : (ULONG)length;
        if (!RtlGenRandom(data, chunk)) {
            return FALSE;
        }
        data += chunk;
        length -= chunk;
    }
    return TRUE;
}
