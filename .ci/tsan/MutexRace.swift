// Reproducer for the first entry of .ci/tsan-suppressions.txt: Synchronization.Mutex on Linux
// under ThreadSanitizer. Two threads add 200,000 each to a counter only inside `withLock`;
// TSan reports a "Swift access race" on it, though the final count is exactly 400,000,
// because the lock's contended path (a futex in the kernel, through the uninstrumented
// Synchronization library) gives TSan no happens-before edge.
//
//   swiftc -sanitize=thread .ci/tsan/MutexRace.swift -o /tmp/mutex-race && /tmp/mutex-race
//   TSAN_OPTIONS=suppressions=.ci/tsan-suppressions.txt /tmp/mutex-race   # no report
import Foundation
import Synchronization

let counter = Mutex(0)
let done = DispatchGroup()
for _ in 0..<2 {
  done.enter()
  Thread {
    for _ in 0..<200_000 { counter.withLock { $0 += 1 } }
    done.leave()
  }.start()
}
done.wait()
print(counter.withLock { $0 })
