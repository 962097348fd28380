/**
 * The tests' remind-later library: wait (a durable `weft.sleep` until `?when`, read-only), then send
 * a message (`msg.send`) — the smallest plan with a sleep step before a world effect. Shared by the
 * sleep, describe and step-admission tests; `name` keeps each test's library its own digest.
 */
import { LibraryBuilder, add, atom, not } from '../../htn/library/builder.js';

export function remindLaterLibrary(name = 'remind') {
  return new LibraryBuilder(name)
    .type('person')
    .predicate('reachable', { '?p': 'person' })
    .predicate('waited', { '?p': 'person' })
    .predicate('notified', { '?p': 'person' })
    .task('remind_later', { '?p': 'person', '?when': 'number' })
    .operator('wait_until', { params: { '?p': 'person', '?when': 'number' }, precondition: not(atom('waited', '?p')), effect: add('waited', '?p'), actuator: { actuator: 'weft.sleep', args: { until: '?when' } }, readOnly: true })
    .operator('send', { params: { '?p': 'person' }, precondition: atom('reachable', '?p'), effect: add('notified', '?p'), actuator: { actuator: 'msg.send', args: { to: '?p' } } })
    .method('wait-then-send', { task: ['remind_later', '?p', '?when'], params: { '?p': 'person', '?when': 'number' }, subtasks: [['wait_until', '?p', '?when'], ['send', '?p']] })
    .build();
}
