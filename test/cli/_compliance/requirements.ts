/**
 * The requirement identifiers of the A2A CLI specification v0.2 (its COMPLIANCE.md registry), each with its tier,
 * area, the sections that govern it and what it asks, in this project's own short words.
 */

export interface Requirement {
  id: string
  tier: 1 | 2 | 3
  spec: string
  requirement: string
}

const tier = (level: 1 | 2 | 3, rows: Array<[string, string, string]>): Requirement[] =>
  rows.map(([id, spec, requirement]) => ({ id: `A2ACLI_${id}`, tier: level, spec, requirement }))

export const REQUIREMENTS: Requirement[] = [
  ...tier(1, [
    [
      'CARD_GET_001',
      '§10.1, §13',
      'card get reads a card from a host, a card URL or a file, and the card picks the transport',
    ],
    ['SEND_001', '§10.2', 'send starts an interaction with a message'],
    ['SEND_002', '§10.2, §6.5', 'send waits for the task by default; --async hands back the ids at once'],
    [
      'SEND_003',
      '§10.2, §9.2',
      '--stream reads the event stream, never hangs without one, and a lone Message ends cleanly',
    ],
    ['SEND_004', '§10.2', 'every artifact part is shown; none is dropped'],
    [
      'SEND_005',
      '§10.2',
      '--media-type sets the type of the part flag before it; a type is guessed only when none is given',
    ],
    ['SEND_006', '§10.2', '--text, --file and --data repeat and keep their order; --data - reads stdin'],
    ['TASK_GET_001', '§10.3', 'task get shows a task with its state, artifacts and history'],
    ['TASK_CANCEL_001', '§10.4', 'task cancel cancels, can be repeated, and shows the state it left'],
    ['INTERACT_001', '§8.1', '--context-id starts a new task in an existing context'],
    [
      'INTERACT_002',
      '§8.1',
      '--task-id continues a task; a refused id fails without starting a task and points at --debug',
    ],
    ['INTERACT_003', '§4.1, §4', 'no server id is made up, and a context is not taken for a chat session'],
    [
      'INTERACT_004',
      '§8.2',
      'task, context and state are printed when a task ends or pauses, with the command to resume',
    ],
    [
      'INTERACT_005',
      '§6.3, §4.1, §8.3',
      'nothing of an interaction is remembered between runs; there is no --continue',
    ],
    ['TASK_POLL_001', '§9.3', 'task get reads once; task get --wait reads until the task ends or pauses'],
    [
      'TASK_POLL_002',
      '§9.3',
      '--poll-interval and --timeout are honoured, reads back off, and Ctrl-C keeps the task id shown',
    ],
    ['TASK_POLL_003', '§9.1, §9.3', 'a wait stops at once on a paused task; an UNSPECIFIED state keeps it waiting'],
    ['TASK_POLL_004', '§9.3', 'a broken stream falls back to reading the task until it settles'],
    [
      'OUT_001',
      '§11.1, §11.5, §8.2',
      'task, context and state in every output mode; the answer on stdout, the rest on stderr',
    ],
    ['OUT_002', '§11.3, App. B', '-o json prints one document, the final protocol object, never a log of events'],
    [
      'OUT_003',
      '§11.3, §11.4, App. B',
      '-o json --stream prints one object a line as it comes, and a final error as its last line',
    ],
    [
      'OUT_004',
      '§11.4, App. B, App. D',
      'errors are the envelope: A2A names for the agent, A2ACLI_ERR_* for the CLI, with hints',
    ],
    ['OUT_005', '§11.2, §6.1', 'text is Label: value lines and blank-line-closed blocks without control sequences'],
    ['OUT_006', '§11.5', '--async still prints the task and context ids'],
    ['EXIT_001', '§11.6, App. D', 'exit statuses 0, 1 and 2, and 3, 4 and 5 only with the errors they stand for'],
    ['EXIT_002', '§6.6, §11.6', "an agent's failed, rejected or paused task still exits 0, with a warning on stderr"],
    ['AUTH_001', '§12.1', "bearer token and API key from flags or variables, attached as the card's schemes say"],
    [
      'AUTH_002',
      '§12.1, §6.5',
      "each credential flag has a variable, and the help warns that a flag's value is exposed",
    ],
    ['AUTH_003', '§12.1, §6.5', 'TLS is verified unless --insecure, which warns on stderr'],
    ['AUTH_004', '§12.1, §7.2', 'credentials never appear in diagnostics, --debug and --verbose included'],
    ['TX_001', '§13.1', 'the transport comes from the card, in the order it lists them'],
    [
      'TX_002',
      '§13.1, §6.5',
      "the card's first usable interface, unless --transport (repeatable, ordered) prefers another",
    ],
    ['TX_003', '§13.1', "the interface's tenant goes in every request as declared, and none when it declares none"],
    ['VER_001', '§13.2', 'A2A-Version on every request, never below 1.0, never a silent downgrade'],
    ['DEFAULT_001', '§6.5', 'the baseline defaults, each overridable by a flag and shown by --help'],
    [
      'CONFIG_001',
      '§8.3',
      'configuration in the usual place, secrets private, config show read-only, no session state',
    ],
    ['CLI_001', '§7.1, §7.2, §6.5', 'help and --help print usage, -v/--version the version, and --help the defaults'],
    ['SKILL_001', '§14.1, §14.2', 'exactly one Agent Skill, lean, sending the agent to --help'],
    ['SKILL_002', '§14.3', 'the skill explains usage and restates no normative requirement'],
  ]),
  ...tier(2, [
    ['CARD_GET_002', '§10.1', 'card get --validate checks the card by the A2A rules'],
    ['TASK_LIST_001', '§7.1, App. A', 'task list pages with a cursor and filters by state and context'],
    ['TASK_SUBSCRIBE_001', '§7.1, §9.2', "task subscribe follows a task's events"],
    [
      'TASK_SUBSCRIBE_002',
      '§9.4, §9.2',
      'a dropped subscription resumes after its last event, the Task first, without a get',
    ],
    ['AUTH_005', '§12.2', 'auth login with the OAuth device code flow'],
    ['AUTH_006', '§12.2', 'auth login with the OAuth client credentials flow'],
    ['AUTH_007', '§12.2', 'the token is stored privately and sent on later calls by itself'],
    ['TX_004', '§13.1', 'two transports or more, each selectable'],
    ['VER_003', '§13.3', 'streaming, push and the extended card are asked for only when the card declares them'],
    [
      'CONFIG_002',
      '§8.3',
      'flag > env > local .env > global .env > default, per agent by file; config show says the source',
    ],
    ['DOWNLOAD_001', '§7.1', "task download saves a task's artifacts to files"],
    ['OUT_007', '§7.2', '--debug logs the raw exchange with the agent on stderr'],
    ['CONFORM_001', '§7.1', 'conformance checks a live agent against the A2A conformance kit'],
    ['CLI_002', '§7.1', 'completion prints a completion script for a shell'],
    ['PUSH_001', '§7.1, App. A', 'task push-config creates, reads, lists and deletes webhooks'],
  ]),
  ...tier(3, [
    ['CARD_GET_003', '§10.1, §12.4', 'card get --extended with a credential of a scheme the public card declares'],
    ['AUTH_008', '§12.4', 'no credential is sent where the card declares no scheme that takes it'],
    ['CARD_GET_004', '§10.1', 'signatures of a card verified and the outcome reported; an unsigned card is no failure'],
    ['CARD_GET_005', '§10.1', 'a catalog or registry entry accepted as an agent card reference'],
    ['PUSH_002', '§9.2', 'a local webhook receiver for push notifications'],
    ['CHAT_001', '§8.1, §7.1', 'chat carries the context and a paused task across turns'],
    ['TX_005', '§13.1', 'the gRPC transport'],
    ['AUTH_009', '§12.3', 'mutual TLS'],
    ['AUTH_010', '§12.3', 'OpenID Connect'],
    ['AUTH_011', '§12.3', 'a task paused at AUTH_REQUIRED is reported and resumed'],
    ['DEMO_SERVER_001', '§7.1, §3', 'a demo-server (mock agent) mode'],
    ['VER_002', '§13.3, A2A §4.6', 'the protocol extensions a server requires are declared'],
  ]),
]

export const areaOf = (id: string): string => id.replace(/^A2ACLI_/, '').replace(/_\d+$/, '')

/** The rows of the DEFAULT_001 breakdown (COMPLIANCE.md §4a), by their key in the YAML template. */
export const DEFAULTS = [
  ['transport_server_preference_order', 'Transport — server preference order'],
  ['task_completion_wait_by_default', 'Task completion — wait by default'],
  ['output_human_readable_text', 'Output — human-readable `text`'],
  ['detail_level_concise', 'Detail level — concise'],
  ['protocol_version_highest_mutual', 'Protocol version — highest mutually supported, never below 1.0'],
  ['transport_security_tls_on', 'Transport security — TLS verification on'],
] as const

export type DefaultKey = (typeof DEFAULTS)[number][0]

/** The CLI-local error codes (the specification's Appendix D) and the exit status each stands for. */
export const ERROR_CODES: Record<string, number> = {
  A2ACLI_ERR_USAGE: 2,
  A2ACLI_ERR_CARD_NOT_FOUND: 3,
  A2ACLI_ERR_CARD_INVALID: 1,
  A2ACLI_ERR_UNREACHABLE: 3,
  A2ACLI_ERR_CREDENTIALS_MISSING: 4,
  A2ACLI_ERR_AUTH_FAILED: 4,
  A2ACLI_ERR_TIMEOUT: 5,
  A2ACLI_ERR_INTERNAL: 1,
}
