import CPoolThreadWord

/// The hook the pool calls around each page allocation and free (1 before, 0 after), so an
/// allocation counter can report pool pages apart from the memory callouts allocate. Nil by
/// default: a page allocation then costs one load and a branch more.
package enum PoolPageAllocationHook {
    package static func install(_ hook: (@convention(c) (Int32) -> Void)?) {
        rlk_pool_set_page_hook(hook)
    }
}
