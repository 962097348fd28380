/**
 * The refunds library the spend and shadow tests share: refund a customer (`refund.issue`, a world
 * effect that spends), then tell them (`email.send`). Plain JS, built with the htn builder the
 * caller passes — the source's in a test, the installed dist's in a domain file a `weft` process
 * loads (shadow-refunds-domain.mjs) — so every copy of the library is the same data.
 */
export function refundsLibrary({ LibraryBuilder, atom, not, add }, name) {
  return new LibraryBuilder(name)
    .type('customer')
    .predicate('known', { '?c': 'customer' })
    .predicate('refunded', { '?c': 'customer' })
    .predicate('told', { '?c': 'customer' })
    .task('refund_and_tell', { '?c': 'customer', '?amount': 'number' })
    .operator('refund', {
      params: { '?c': 'customer', '?amount': 'number' },
      precondition: not(atom('refunded', '?c')),
      effect: add('refunded', '?c'),
      actuator: { actuator: 'refund.issue', args: { customer: '?c', amount: '?amount' } },
    })
    .operator('tell', {
      params: { '?c': 'customer', '?amount': 'number' },
      precondition: atom('refunded', '?c'),
      effect: add('told', '?c'),
      actuator: { actuator: 'email.send', args: { to: '?c', amount: '?amount' } },
    })
    .method('refund-then-tell', {
      task: ['refund_and_tell', '?c', '?amount'],
      params: { '?c': 'customer', '?amount': 'number' },
      subtasks: [['refund', '?c', '?amount'], ['tell', '?c', '?amount']],
    })
    .build();
}
