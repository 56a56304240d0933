import Glibc
import Testing
import LoopAllocationCounter

/// glibc's usable size for a request of `n` bytes on x86-64 when the chunk is cut to size
/// (chunk = n + 8 rounded up to 16, at least 32; usable = chunk - 8). glibc hands out a whole
/// free chunk when the rest would be under 32 bytes, so a block may be up to 24 bytes larger:
/// the tests compare with `malloc_usable_size` and check it lies in that window.
func glibcUsable(_ n: Int) -> UInt64 { UInt64(max(32, (n + 8 + 15) & ~15) - 8) }

func usable(_ pointer: UnsafeMutableRawPointer?) -> UInt64 { UInt64(glibcMallocUsableSize(pointer)) }

/// glibc's own answer (Glibc's module map leaves malloc.h out).
@_silgen_name("malloc_usable_size")
func glibcMallocUsableSize(_ pointer: UnsafeMutableRawPointer?) -> Int

let interposing = AllocationCounter.isInterposing

/// Every test that switches the process-wide mode goes through `AllocationCounter.withMode`,
/// which serialises them against each other and against the documented scenario.
@Suite(.enabled(if: interposing, "the allocator is not interposed (sanitizer build)"))
struct CounterTests {
    @Test func countsMallocAndFreeToTheByte() {
        let (figures, sizes) = AllocationCounter.withMode(.counting) { () -> (AllocationFigures, (UInt64, UInt64)) in
            let before = AllocationCounter.beginSpan().user
            let first = malloc(100)
            let second = malloc(1000)
            let sizes = (usable(first), usable(second))
            free(first)
            let after = AllocationCounter.currentThread().user
            free(second)
            return (after.since(before), sizes)
        }
        #expect(sizes.0 >= glibcUsable(100) && sizes.0 <= glibcUsable(100) + 24)
        #expect(sizes.1 >= glibcUsable(1000) && sizes.1 <= glibcUsable(1000) + 24)
        #expect(figures.allocations == 2)
        #expect(figures.frees == 1)
        #expect(figures.requestedBytes == 1100)
        #expect(figures.bytes == sizes.0 + sizes.1)
        #expect(figures.freedBytes == sizes.0)
        #expect(figures.net == Int64(sizes.1))
        #expect(figures.peak == Int64(sizes.0 + sizes.1))
    }

    @Test func countsEveryEntryPoint() {
        let (figures, status) = AllocationCounter.withMode(.counting) { () -> (AllocationFigures, Int32) in
            let before = AllocationCounter.beginSpan().user
            let zeroed = calloc(10, 30)                       // 300 bytes
            let grown = realloc(malloc(40), 400)              // a free of 40's block, an allocation of 400
            var aligned: UnsafeMutableRawPointer?
            let status = posix_memalign(&aligned, 64, 64)
            let alignedAgain = aligned_alloc(128, 128)
            let valloced = valloc(10)
            free(zeroed); free(grown); free(aligned); free(alignedAgain); free(valloced)
            return (AllocationCounter.currentThread().user.since(before), status)
        }
        #expect(status == 0)
        // malloc, calloc, realloc's new block, posix_memalign, aligned_alloc, valloc.
        #expect(figures.allocations == 6)
        // realloc's old block, then the five frees.
        #expect(figures.frees == 6)
        #expect(figures.requestedBytes == 300 + 40 + 400 + 64 + 128 + 10)
        #expect(figures.net == 0)
        #expect(figures.bytes == figures.freedBytes)
    }

    /// A block above glibc's mmap threshold (128 KiB) has a 16-byte header: the inline size
    /// read must still agree with malloc_usable_size.
    @Test func countsAnMappedBlockAsMallocUsableSizeDoes() {
        let (figures, size) = AllocationCounter.withMode(.counting) { () -> (AllocationFigures, UInt64) in
            let before = AllocationCounter.beginSpan().user
            let block = malloc(1 << 20)
            let size = usable(block)
            free(block)
            return (AllocationCounter.currentThread().user.since(before), size)
        }
        #expect(size >= 1 << 20)
        #expect(figures.allocations == 1 && figures.frees == 1)
        #expect(figures.bytes == size && figures.freedBytes == size && figures.peak == Int64(size))
    }

    /// A request glibc refuses returns NULL and leaves every figure as it was, requested bytes
    /// included (the counting path reads no header when there is no block).
    @Test func aRefusedRequestCountsNothing() {
        let (figures, refused) = AllocationCounter.withMode(.counting) { () -> (AllocationFigures, Bool) in
            let before = AllocationCounter.beginSpan().user
            let block = malloc(Int.max)  // above PTRDIFF_MAX: glibc fails it with ENOMEM
            let refused = block == nil
            free(block)
            return (AllocationCounter.currentThread().user.since(before), refused)
        }
        #expect(refused)
        #expect(figures.allocations == 0 && figures.frees == 0)
        #expect(figures.requestedBytes == 0 && figures.bytes == 0 && figures.peak == 0)
    }

    @Test func offCountsNothing() {
        let figures = AllocationCounter.withMode(.off) { () -> AllocationFigures in
            let before = AllocationCounter.beginSpan().user
            free(malloc(100))
            return AllocationCounter.currentThread().user.since(before)
        }
        #expect(figures == .zero)
    }

    @Test func ignoredAllocationsGoToTheirOwnBucket() {
        let (user, ignored, size) = AllocationCounter.withMode(.counting) { () -> (AllocationFigures, AllocationFigures, UInt64) in
            let before = AllocationCounter.beginSpan()
            let size = AllocationCounter.ignoring { () -> UInt64 in
                let block = malloc(200)
                defer { free(block) }
                return usable(block)
            }
            let after = AllocationCounter.currentThread()
            return (after.user.since(before.user), after.ignored.since(before.ignored), size)
        }
        #expect(user == .zero)
        #expect(ignored.allocations == 1 && ignored.frees == 1 && ignored.bytes == size)
    }

    /// Switching the mode swaps the entry points malloc and free jump through: each switch
    /// takes effect on the next call.
    @Test func switchingModesSwapsTheEntryPoints() {
        let (off, counted, sampled) = AllocationCounter.withMode(.counting) { () -> (AllocationFigures, AllocationFigures, AllocationFigures) in
            func measure() -> AllocationFigures {
                let before = AllocationCounter.beginSpan().user
                free(malloc(100))
                return AllocationCounter.currentThread().user.since(before)
            }
            AllocationCounter.mode = .off
            let off = measure()
            AllocationCounter.mode = .counting
            let counted = measure()
            // The sampling tests' interval: a thread's countdown carries over, and one left from a
            // longer interval would delay their samples.
            AllocationCounter.mode = .sampling(everyBytes: 1000)
            let sampled = measure()
            return (off, counted, sampled)
        }
        #expect(off == .zero)
        #expect(counted.allocations == 1 && counted.frees == 1 && counted.requestedBytes == 100 && counted.net == 0)
        // Sampling counts no block and no byte, only samples.
        #expect(sampled == .zero)
    }

    @Test func freeingNullCountsNothing() {
        let figures = AllocationCounter.withMode(.counting) { () -> AllocationFigures in
            let before = AllocationCounter.beginSpan().user
            free(nil)
            return AllocationCounter.currentThread().user.since(before)
        }
        #expect(figures == .zero)
    }

    /// The current category's figures are swapped in and out when the category changes: user
    /// figures that straddle an ignored stretch come back whole, and the stretch stays apart.
    @Test func userFiguresSurviveAnIgnoredStretch() {
        let (user, ignored, sizes) = AllocationCounter.withMode(.counting) { () -> (AllocationFigures, AllocationFigures, (UInt64, UInt64)) in
            let before = AllocationCounter.beginSpan()
            let kept = malloc(300)
            let ignoredSize = AllocationCounter.ignoring { () -> UInt64 in
                let block = malloc(5000)
                defer { free(block) }
                return usable(block)
            }
            let keptSize = usable(kept)
            free(kept)
            let after = AllocationCounter.currentThread()
            return (after.user.since(before.user), after.ignored.since(before.ignored), (keptSize, ignoredSize))
        }
        #expect(user.allocations == 1 && user.frees == 1)
        #expect(user.bytes == sizes.0 && user.freedBytes == sizes.0 && user.net == 0 && user.peak == Int64(sizes.0))
        #expect(user.requestedBytes == 300)
        #expect(ignored.allocations == 1 && ignored.frees == 1 && ignored.bytes == sizes.1 && ignored.peak == Int64(sizes.1))
    }

    /// Outside the user category the sampling countdown is parked: ignored bytes take no
    /// sample and do not move the user's countdown.
    @Test func samplingSkipsIgnoredAllocations() {
        let (ignoredSamples, userSamples) = AllocationCounter.withMode(.sampling(everyBytes: 1000)) { () -> (UInt64, UInt64) in
            let start = AllocationCounter.currentThread().samples
            AllocationCounter.ignoring { for _ in 0..<20 { free(malloc(500)) } }
            let afterIgnored = AllocationCounter.currentThread().samples
            for _ in 0..<10 { free(malloc(500)) }
            return (afterIgnored - start, AllocationCounter.currentThread().samples - afterIgnored)
        }
        #expect(ignoredSamples == 0)
        #expect(userSamples == 5 || userSamples == 6)
    }

    @Test func samplingTakesOneSamplePerIntervalOfRequestedBytes() {
        let samples = AllocationCounter.withMode(.sampling(everyBytes: 1000)) { () -> UInt64 in
            let before = AllocationCounter.currentThread().samples
            for _ in 0..<10 { free(malloc(500)) }    // 5000 bytes: 5 samples
            return AllocationCounter.currentThread().samples - before
        }
        // The countdown carries over between spans on a thread, so 5000 bytes cross 5 or 6 marks.
        #expect(samples == 5 || samples == 6)
    }

    @Test func aThreadCountsOnlyItsOwnAllocations() {
        let (figures, status) = AllocationCounter.withMode(.counting) { () -> (AllocationFigures, Int32) in
            let before = AllocationCounter.beginSpan().user
            var thread = pthread_t()
            let status = pthread_create(&thread, nil, { _ in
                for _ in 0..<100 { free(malloc(64)) }
                return nil
            }, nil)
            if status == 0 { pthread_join(thread, nil) }
            return (AllocationCounter.currentThread().user.since(before), status)
        }
        #expect(status == 0)
        // Creating and joining the thread may allocate a little here; its 100 blocks do not show.
        #expect(figures.allocations < 100)
    }
}
