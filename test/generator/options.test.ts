import { execFileSync } from 'node:child_process'
import { mkdirSync, mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest'
import { type CliIo, equivalentCommand, run } from '../../generator/src/cli.ts'
import { UsageError } from '../../generator/src/errors.ts'
import { markdown, shellWord, tsString } from '../../generator/src/escape.ts'
import { toPackageName, toWorkerName } from '../../generator/src/names.ts'
import {
  DEFAULT_SKILLS,
  detectPackageManager,
  type ProjectOptions,
  parseSkill,
  RUNTIMES,
  resolveOptions,
  type Skill,
  TEMPLATES,
} from '../../generator/src/options.ts'
import { renderProject, tsValue } from '../../generator/src/render.ts'

/**
 * `run` parses its flags with its own commander program and hands the answers to `resolveOptions`. To check
 * `equivalentCommand` against that very parser, `resolveOptions` is wrapped: while `capture.on` is set, the
 * options `run` resolved are recorded and `run` is stopped there (nothing is written). Otherwise it is the
 * real function.
 */
const capture = vi.hoisted(() => ({ on: false, options: undefined as ProjectOptions | undefined }))
vi.mock('../../generator/src/options.ts', async (importOriginal) => {
  const actual = await importOriginal<typeof import('../../generator/src/options.ts')>()
  const { UsageError: StopError } = await import('../../generator/src/errors.ts')
  return {
    ...actual,
    resolveOptions: (...args: Parameters<typeof actual.resolveOptions>) => {
      const options = actual.resolveOptions(...args)
      if (capture.on) {
        capture.options = options
        throw new StopError('captured by the test', 99)
      }
      return options
    },
  }
})

/** Strings a user could type that break naive code in every context the generator writes to. */
const HOSTILE = [
  `He said "hi" and 'bye'`,
  'back\\slash \\" \\n \\u0041 \\',
  '{{name}} }} {{{raw}}} {{> agent}} {{#each x}}',
  '</script><script>alert(1)</script><!--',
  'line one\nline two',
  'carriage\rreturn\r\nand crlf',
  'line\u2028separator\u2029paragraph',
  'emoji 🤖👩🏽‍💻 café ß 日本',
  '$(rm -rf /)',
  '`rm -rf /`',
  '${x} ${process.exit(1)}',
  "it's; echo pwned && true || false | cat > /dev/null < /dev/null & *?~ #!",
  '*bold* _it_ [link](http://x) # heading | pipe ~~s~~ > quote',
  '&amp; &lt; &#42; <b>',
  '\t padded  ',
  '-n',
  '--yes',
  '',
]

function usageErrorOf(action: () => unknown): UsageError {
  try {
    action()
  } catch (error) {
    expect(error).toBeInstanceOf(UsageError)
    return error as UsageError
  }
  throw new Error('expected a UsageError, but nothing was thrown')
}

let cwd: string

beforeEach(() => {
  cwd = mkdtempSync(join(realpathSync(tmpdir()), 'a2a-options-'))
})

afterEach(() => {
  capture.on = false
  capture.options = undefined
  rmSync(cwd, { recursive: true, force: true })
})

describe('toPackageName', () => {
  it.each([
    ['Weather Bot', 'weather-bot'],
    ['Weather Bot!', 'weather-bot'],
    ['  Weather   Bot  ', 'weather-bot'],
    ['Café Ünïcödé Agent', 'cafe-unicode-agent'],
    ['Crème brûlée', 'creme-brulee'],
    ['.hidden', 'hidden'],
    ['..dots', 'dots'],
    ['_private', 'private'],
    ['._.mixed', 'mixed'],
    ['a -- b  ..!! c', 'a-b-..-c'],
    ['a - - - b', 'a-b'],
    ['--edge--', 'edge'],
    ['🤖 Robot 🤖', 'robot'],
    ['Robot🤖Helper', 'robot-helper'],
    ['MyAgent2', 'myagent2'],
  ])('turns %j into %j', (input, expected) => {
    expect(toPackageName(input)).toBe(expected)
  })
})

describe('toWorkerName', () => {
  it.each([
    ['weather-bot', 'weather-bot'],
    ['@acme/weather_bot.v2', 'weather-bot-v2'],
    ['..--x--..', 'x'],
    ['a'.repeat(70), 'a'.repeat(63)],
    [`${'a'.repeat(62)}-b`, 'a'.repeat(62)],
    ['._', 'agent'],
  ])(
    'names the Worker of package %j %j (lowercase letters, digits and inner dashes, at most 63)',
    (packageName, expected) => {
      expect(toWorkerName(packageName)).toBe(expected)
    },
  )
})

describe('package names npm refuses', () => {
  it.each([
    ['node_modules', 'node_modules', 'node_modules'],
    ['favicon.ico', 'favicon.ico', 'favicon.ico'],
    ['a 215-character name', 'a'.repeat(215), 'a'.repeat(215)],
    // Leading dots are stripped first; an emoji before them turns into a dash that is stripped later, so the
    // converted name still starts with a dot.
    ['🤖.hidden (".hidden" after conversion)', '🤖.hidden', '.hidden'],
    ['http (a Node core module)', 'http', 'http'],
  ])(
    'refuses the directory %s with a UsageError (exit 2) naming the package name and --package-name',
    (_label, dir, packageName) => {
      const error = usageErrorOf(() => resolveOptions({ dir }, cwd))
      expect(error.exitCode).toBe(2)
      expect(error.message).toContain(`Invalid package name ${JSON.stringify(packageName)}`)
      expect(error.message).toContain('pass --package-name <name>')
    },
  )

  it.each(['天气机器人', '!!!', 'Агент'])(
    'names the package "agent" for the directory %j, of which no package name can be made, and keeps the name on the card',
    (dir) => {
      const options = resolveOptions({ dir }, cwd)
      expect(options.packageName).toBe('agent')
      expect(options.name).toBe(dir)
    },
  )

  it('takes --package-name over the directory name, and refuses one npm would refuse, naming the flag', () => {
    expect(resolveOptions({ dir: '天气机器人', packageName: ' @me/weather ' }, cwd).packageName).toBe('@me/weather')
    const error = usageErrorOf(() => resolveOptions({ dir: 'weather', packageName: 'Bad Name' }, cwd))
    expect(error.exitCode).toBe(2)
    expect(error.message).toMatch(/^--package-name: Invalid package name "Bad Name"/)
  })

  it('accepts a 214-character name, the longest npm allows', () => {
    expect(resolveOptions({ dir: 'a'.repeat(214) }, cwd).packageName).toBe('a'.repeat(214))
  })
})

describe('parseSkill', () => {
  it('splits "id:Name:Description" at the first two colons, keeping the colons of the description', () => {
    expect(parseSkill('id:Name:Description with: colons: and more')).toEqual({
      id: 'id',
      name: 'Name',
      description: 'Description with: colons: and more',
      tags: ['id'],
      examples: [],
    })
  })

  it('makes a name and description from the id alone', () => {
    expect(parseSkill('plan-trip')).toEqual({
      id: 'plan-trip',
      name: 'Plan Trip',
      description: 'Plan Trip',
      tags: ['plan-trip'],
      examples: [],
    })
  })

  it('uses the name as the description when only id and name are given', () => {
    expect(parseSkill('echo:Echo')).toEqual({
      id: 'echo',
      name: 'Echo',
      description: 'Echo',
      tags: ['echo'],
      examples: [],
    })
  })

  it('reads the JSON form with tags and examples', () => {
    const skill = {
      id: 'weather',
      name: 'Weather: now',
      description: 'Says "sunny" or not',
      tags: ['weather', 'forecast'],
      examples: ['Rain in Oslo?', 'Wind: Paris'],
    }
    expect(parseSkill(JSON.stringify(skill))).toEqual(skill)
    expect(parseSkill(`  ${JSON.stringify(skill)}  `)).toEqual(skill)
  })

  it('fills the JSON form from the id when name, description and tags are left out', () => {
    expect(parseSkill('{"id":"look-up"}')).toEqual({
      id: 'look-up',
      name: 'Look Up',
      description: 'Look Up',
      tags: ['look-up'],
      examples: [],
    })
  })

  it.each(['{"id": "x",', '{id: "x"}', "{'id':'x'}", '{"id":"x"}}'])(
    'refuses invalid JSON %j with a UsageError naming --skill',
    (value) => {
      const error = usageErrorOf(() => parseSkill(value))
      expect(error.message).toContain('--skill')
      expect(error.exitCode).toBe(2)
    },
  )

  it.each([
    ['id is a number', '{"id": 42}'],
    ['id is missing', '{"name": "No id"}'],
    ['tags is a string', '{"id": "x", "tags": "a,b"}'],
    ['tags holds a number', '{"id": "x", "tags": ["a", 1]}'],
    ['examples is an object', '{"id": "x", "examples": {"a": 1}}'],
    ['examples holds null', '{"id": "x", "examples": [null]}'],
    ['name is a number', '{"id": "x", "name": 42}'],
    ['description is an array', '{"id": "x", "description": ["a"]}'],
  ])('refuses the JSON form when %s, with a UsageError naming --skill', (_case, value) => {
    const error = usageErrorOf(() => parseSkill(value))
    expect(error.message).toContain('--skill')
    expect(error.exitCode).toBe(2)
  })
})

describe('resolveOptions', () => {
  it('fills every default from {}: my-agent, "My Agent", the echo template and its skill, Node, no push notifications, no auth, install and git', () => {
    const options = resolveOptions({}, cwd)
    expect(options).toEqual({
      dir: join(cwd, 'my-agent'),
      dirArgument: 'my-agent',
      packageName: 'my-agent',
      name: 'My Agent',
      description: 'An A2A agent built with create-a2a-agent',
      skills: [DEFAULT_SKILLS.echo],
      streaming: true,
      pushNotifications: false,
      telemetry: false,
      auth: 'none',
      template: 'echo',
      runtime: 'node',
      deploy: ['docker'],
      pm: detectPackageManager(),
      install: true,
      git: true,
      force: false,
      json: false,
    })
    expect(options.skills).toEqual([
      {
        id: 'echo',
        name: 'Echo',
        description: 'Repeats your message back',
        tags: ['echo'],
        examples: ['Hello there!'],
      },
    ])
  })

  it.each(TEMPLATES)('gives the %s template its own default skill', (template) => {
    expect(resolveOptions({ template }, cwd).skills).toEqual([DEFAULT_SKILLS[template]])
  })

  it('trims the name and description', () => {
    const options = resolveOptions({ name: '  Weather Bot ', description: '\n Says the weather \t' }, cwd)
    expect(options.name).toBe('Weather Bot')
    expect(options.description).toBe('Says the weather')
  })

  it('refuses two skills with the same id', () => {
    const error = usageErrorOf(() => resolveOptions({ skills: [parseSkill('dup:One'), parseSkill('dup:Two')] }, cwd))
    expect(error.message).toContain('--skill')
    expect(error.message).toContain('"dup"')
    expect(error.exitCode).toBe(2)
  })

  it.each(['1abc', 'a b', '', 'a:b', 'é', `a${'b'.repeat(64)}`])('refuses the skill id %j', (id) => {
    const error = usageErrorOf(() =>
      resolveOptions({ skills: [{ id, name: 'Name', description: 'd', tags: [], examples: [] }] }, cwd),
    )
    expect(error.message).toContain(`Invalid skill id ${JSON.stringify(id)}`)
    expect(error.exitCode).toBe(2)
  })

  it('refuses a skill with an empty name', () => {
    const error = usageErrorOf(() =>
      resolveOptions({ skills: [{ id: 'a', name: '  ', description: 'd', tags: [], examples: [] }] }, cwd),
    )
    expect(error.message).toContain('--skill a')
  })

  it.each([
    ['--auth', 'basic', 'auth'],
    ['--auth', '', 'auth'],
    ['--template', 'react', 'template'],
    ['--template', 'Echo', 'template'],
    ['--runtime', 'cloudflare', 'runtime'],
    ['--runtime', 'Bun', 'runtime'],
    ['--runtime', '', 'runtime'],
    ['--pm', 'deno', 'pm'],
    ['--pm', '', 'pm'],
  ] as const)('refuses %s %j outside its choices, naming the flag', (flag, value, field) => {
    const error = usageErrorOf(() => resolveOptions({ [field]: value }, cwd))
    expect(error.message).toContain(`${flag} must be one of`)
    expect(error.message).toContain(JSON.stringify(value))
    expect(error.exitCode).toBe(2)
  })

  it('declares push notifications only when asked', () => {
    expect(resolveOptions({ pushNotifications: true }, cwd).pushNotifications).toBe(true)
    expect(resolveOptions({}, cwd).pushNotifications).toBe(false)
  })

  it.each([
    ['--name', '', 'name'],
    ['--name', ' \n\t ', 'name'],
    ['--description', '', 'description'],
    ['--description', '   ', 'description'],
    ['[dir]', '  ', 'dir'],
  ] as const)('refuses an empty %s after trimming (%j)', (flag, value, field) => {
    const error = usageErrorOf(() => resolveOptions({ [field]: value }, cwd))
    expect(error.message).toContain(flag)
    expect(error.message).toContain('must not be empty')
  })
})

describe('resolveOptions with --auth oidc', () => {
  it.each([
    'https://login.example.com/',
    'https://login.microsoftonline.com/tenant-id/v2.0',
    'http://127.0.0.1:8080',
    'http://localhost:8080/realms/agents',
    'http://[::1]:9000/',
  ])('takes the issuer %s and an audience, trimmed', (issuer) => {
    const options = resolveOptions({ auth: 'oidc', oidcIssuer: ` ${issuer} `, oidcAudience: ' api://agent ' }, cwd)
    expect(options).toMatchObject({ auth: 'oidc', oidcIssuer: issuer, oidcAudience: 'api://agent' })
  })

  it('leaves both unset without them (.env gets placeholders)', () => {
    expect(resolveOptions({ auth: 'oidc' }, cwd)).toMatchObject({ oidcIssuer: undefined, oidcAudience: undefined })
  })

  it.each([
    ['http://login.example.com/', 'https: URL'],
    ['http://10.0.0.5/', 'https: URL'],
    ['login.example.com', 'https: URL'],
    ['ftp://login.example.com/', 'https: URL'],
    ['', 'https: URL'],
    ['https://login.example.com/?tenant=a', 'without a query'],
    ['https://login.example.com/#x', 'without a query'],
    ['https://login.example.com/$tenant', 'without a query'],
    ["https://login.example.com/a'b", 'without a query'],
  ])('refuses the issuer %j in one line naming --oidc-issuer', (issuer, problem) => {
    const error = usageErrorOf(() => resolveOptions({ auth: 'oidc', oidcIssuer: issuer }, cwd))
    expect(error.message).toMatch(/^--oidc-issuer must be /)
    expect(error.message).toContain(problem)
    expect(error.message).toContain(JSON.stringify(issuer))
    expect(error.message).not.toContain('\n')
    expect(error.exitCode).toBe(2)
  })

  it.each(['', '   ', 'my agent', 'a,,b', 'aud#1', '$AUD', '"api"'])(
    'refuses the audience %j in one line naming --oidc-audience',
    (audience) => {
      const error = usageErrorOf(() => resolveOptions({ auth: 'oidc', oidcAudience: audience }, cwd))
      expect(error.message).toMatch(/^--oidc-audience must /)
      expect(error.message).not.toContain('\n')
      expect(error.exitCode).toBe(2)
    },
  )

  it.each(['none', 'bearer', 'apikey'])(
    'refuses an issuer or audience with --auth %s, where nothing reads them',
    (auth) => {
      expect(usageErrorOf(() => resolveOptions({ auth, oidcIssuer: 'https://a.example/' }, cwd)).message).toBe(
        `--oidc-issuer is for --auth oidc (got --auth ${auth})`,
      )
      expect(usageErrorOf(() => resolveOptions({ auth, oidcAudience: 'api://agent' }, cwd)).message).toBe(
        `--oidc-audience is for --auth oidc (got --auth ${auth})`,
      )
    },
  )
})

describe('detectPackageManager', () => {
  it.each([
    ['pnpm/9.0.0 npm/? node/v20.11.0 linux x64', 'pnpm'],
    ['yarn/1.22.19 npm/? node/v20.11.0 darwin arm64', 'yarn'],
    ['bun/1.1.0 npm/? node/v21.6.0 linux x64', 'bun'],
    ['npm/10.2.4 node/v20.11.0 linux x64 workspaces/false', 'npm'],
    ['cnpm/9.0.0 node/v20.11.0', 'npm'],
    ['', 'npm'],
  ])('reads %j as %s', (userAgent, expected) => {
    expect(detectPackageManager(userAgent)).toBe(expected)
  })

  it('falls back to npm without a user agent', () => {
    const saved = process.env.npm_config_user_agent
    delete process.env.npm_config_user_agent
    try {
      expect(detectPackageManager(undefined)).toBe('npm')
      expect(detectPackageManager()).toBe('npm')
    } finally {
      if (saved !== undefined) process.env.npm_config_user_agent = saved
    }
  })
})

describe('escaping', () => {
  const hostile = HOSTILE.map((value) => [value] as const)

  it.each([...HOSTILE, 'lone \ud800 surrogate', 'nul \0 byte'])(
    'tsString(%j) is a string literal that evaluates to exactly the input, with no raw <',
    (value) => {
      const literal = tsString(value)
      expect(literal).not.toContain('<')
      expect(literal).not.toMatch(/[\n\r]/)
      expect(literal).toMatch(/^".*"$/s)
      expect(new Function(`return ${literal}`)()).toBe(value)
      // Still one expression when something follows it on the line, as in `name: {{ts name}},`.
      expect(new Function(`return [${literal}, 1]`)()).toEqual([value, 1])
    },
  )

  it.each(hostile)('shellWord(%j) is read back by /bin/sh as exactly the input', (value) => {
    const word = shellWord(value)
    const printed = execFileSync('/bin/sh', ['-c', `printf %s ${word}`], { encoding: 'utf8', timeout: 5_000 })
    expect(printed).toBe(value)
  })

  it('shellWord quotes an empty string so it stays one word', () => {
    const words = execFileSync('/bin/sh', ['-c', `printf '[%s]' a ${shellWord('')} b`], {
      encoding: 'utf8',
      timeout: 5_000,
    })
    expect(words).toBe('[a][][b]')
  })

  const unescapeMarkdown = (text: string) => text.replace(/\\(.)/gs, '$1')

  it.each(hostile)(
    'markdown(%j) is one line, every markup character, < and entity & backslash-escaped, and nothing lost',
    (value) => {
      const text = markdown(value)
      expect(text).not.toMatch(/[\n\r]/)
      expect(text).not.toMatch(/^\s*>/)
      for (const [index, char] of [...text].entries()) {
        if (!'*_[]#|`<'.includes(char) && !(char === '&' && /^&#?[A-Za-z0-9]+;/.test([...text].slice(index).join(''))))
          continue
        let backslashes = 0
        for (let i = index - 1; i >= 0 && [...text][i] === '\\'; i--) backslashes++
        expect(backslashes % 2, `${char} at ${index} of ${JSON.stringify(text)} is not escaped`).toBe(1)
      }
      expect(unescapeMarkdown(text)).toBe(value.replace(/\r\n?|\n/g, ' '))
    },
  )

  it('markdown escapes the markup characters of a table cell', () => {
    expect(markdown('a|b *c* _d_ [e] #f')).toBe('a\\|b \\*c\\* \\_d\\_ \\[e\\] \\#f')
  })

  it('markdown leaves what starts no markup as typed: &, " and > but at the start', () => {
    expect(markdown('Weather <Bot> & "Co"')).toBe('Weather \\<Bot> & "Co"')
    expect(markdown('&amp; &#42; &#x2A; AT&T')).toBe('\\&amp; &\\#42; &\\#x2A; AT&T')
    expect(markdown('> quoted >')).toBe('\\> quoted >')
  })
})

describe('tsValue', () => {
  const evaluate = (expression: string): unknown => new Function(`return (${expression})`)()

  it('evaluates to a deep-equal copy of nested values with hostile strings and odd keys', () => {
    const value = {
      plain: 'x',
      strings: HOSTILE,
      nested: {
        'odd-key': 1,
        'with space': true,
        '</script>': null,
        '': 'empty key',
        '1abc': [{ 'a"b': 'quote in key', "it's": 'apostrophe', 'back\\slash': 'k' }],
        $ok: [],
        _under: {},
        constructor: 'c',
        toString: 'not a function',
        'line\nbreak\u2028': 'k',
        '{{name}}': '}}',
        '🤖': '🤖',
        '0': 'numeric key',
      },
      numbers: [0, -1.5, 1e21, 42],
      literals: [true, false, null],
      mixed: [1, 'two', { three: 3 }, [4, ['five']]],
      skills: [
        { id: 'a', name: HOSTILE[0], description: HOSTILE[3], tags: HOSTILE.slice(4, 8), examples: HOSTILE.slice(8) },
      ],
    }
    const expression = tsValue(value)
    expect(expression).not.toContain('<')
    expect(evaluate(expression)).toEqual(value)
  })

  it.each([[[]], [{}], ['</script>'], [[{}]], [[[]]], [0], [null]])('evaluates %j to itself', (value) => {
    expect(evaluate(tsValue(value))).toEqual(value)
  })

  it('keeps a key named __proto__ as an own key, not as the prototype', () => {
    const value = JSON.parse('{"__proto__": {"polluted": true}, "a": 1}') as Record<string, unknown>
    const copy = evaluate(tsValue(value)) as Record<string, unknown>
    expect(Object.getPrototypeOf(copy)).toBe(Object.prototype)
    expect(Object.keys(copy).sort()).toEqual(['__proto__', 'a'])
    // biome-ignore lint/complexity/useLiteralKeys: the own property named __proto__, not the prototype accessor
    // biome-ignore lint/suspicious/noProto: the same own property
    expect(copy['__proto__']).toEqual({ polluted: true })
  })
})

describe('renderProject guard', () => {
  let templates: string

  /** A templates folder of our own: `base/`, `partials/`, `echo/` and each runtime's folder, with the given files. */
  function makeTemplates(files: Record<string, string>): string {
    for (const folder of ['base', 'partials', 'echo', ...RUNTIMES.map((runtime) => `runtimes/${runtime}`)])
      mkdirSync(join(templates, folder), { recursive: true })
    for (const [path, content] of Object.entries(files)) {
      mkdirSync(dirname(join(templates, path)), { recursive: true })
      writeFileSync(join(templates, path), content)
    }
    return templates
  }

  const options = () =>
    resolveOptions(
      {
        dir: 'guarded',
        name: 'Bot "</script>" {{x}}',
        description: 'Says `hi`\nand more',
        skills: [{ id: 'a', name: 'Skill <A>', description: 'd', tags: ['t<1>'], examples: ['e`1`'] }],
      },
      cwd,
    )

  beforeEach(() => {
    templates = join(cwd, 'templates')
  })

  it.each([
    ['{{name}}', 'base/bare.txt.hbs'],
    ['{{{name}}}', 'base/bare.txt.hbs'],
    ['{{description}}', 'base/bare.txt.hbs'],
    ['{{#each skills}}{{name}}{{/each}}', 'base/bare.txt.hbs'],
    ['{{#each skills}}{{description}}{{/each}}', 'base/bare.txt.hbs'],
    ['{{#each skills}}{{#each tags}}{{this}}{{/each}}{{/each}}', 'base/bare.txt.hbs'],
    ['{{#each skills}}{{examples}}{{/each}}', 'base/bare.txt.hbs'],
    ['{{#each skillCases}}{{example}}{{/each}}', 'base/bare.txt.hbs'],
    ['{{name}}', 'echo/src/bare.ts.hbs'],
  ])('refuses a template printing a user string bare: %s in %s', (source, path) => {
    makeTemplates({ [path]: `before ${source} after\n` })
    expect(() => renderProject(templates, options(), 'file:./x.tgz')).toThrow(/escaping helper/)
  })

  it('refuses a bare user string printed from a partial', () => {
    makeTemplates({ 'partials/card.hbs': 'name = {{name}}\n', 'base/uses-partial.hbs': '{{> card}}\n' })
    expect(() => renderProject(templates, options(), 'file:./x.tgz')).toThrow(/escaping helper/)
  })

  it('renders user strings through {{ts}}, {{md}} and {{json}}', () => {
    makeTemplates({
      'base/card.ts.hbs': 'export const name = {{ts name}}\n',
      'base/README.md.hbs': '# {{md name}}\n',
      'base/data.json.hbs': '{"description": {{json description}}, "tags": {{json skills.0.tags}} }\n',
    })
    const project = options()
    const files = renderProject(templates, project, 'file:./x.tgz')
    expect(files.map((file) => file.path).sort()).toEqual(['README.md', 'card.ts', 'data.json'])
    const content = (path: string) => files.find((file) => file.path === path)!.content as string
    expect(content('card.ts')).toBe(`export const name = ${tsString(project.name)}\n`)
    expect(content('README.md')).toBe(`# ${markdown(project.name)}\n`)
    expect(JSON.parse(content('data.json'))).toEqual({ description: project.description, tags: ['t<1>'] })
  })

  it("renders base, then the runtime's folder, then the template's: a later layer wins, another runtime's files stay out", () => {
    makeTemplates({
      'base/entry.txt': 'base\n',
      'base/shared.txt.hbs': '{{#if bun}}on bun{{else}}elsewhere{{/if}}\n',
      'runtimes/bun/entry.txt': 'bun\n',
      'runtimes/bun/src/server.ts': 'bun server\n',
      'runtimes/deno/deno.json': '{}\n',
      'echo/entry.txt': 'echo\n',
    })
    const render = (runtime: (typeof RUNTIMES)[number]) =>
      Object.fromEntries(
        renderProject(templates, { ...options(), runtime }, 'file:./x.tgz').map((file) => [file.path, file.content]),
      )
    expect(render('bun')).toEqual({ 'entry.txt': 'echo\n', 'shared.txt': 'on bun\n', 'src/server.ts': 'bun server\n' })
    expect(render('node')).toEqual({ 'entry.txt': 'echo\n', 'shared.txt': 'elsewhere\n' })
    expect(render('deno')).toEqual({ 'entry.txt': 'echo\n', 'shared.txt': 'elsewhere\n', 'deno.json': '{}\n' })
  })

  it('does not write a template that renders only whitespace, and drops the base file a template blanks', () => {
    makeTemplates({
      'base/_env.hbs': '{{#if authBearer}}TOKEN={{secret}}{{/if}}\n  \n\t\n',
      'base/kept.txt': 'kept\n',
      'base/overridden.txt.hbs': 'from base\n',
      'echo/overridden.txt.hbs': '{{#if llm}}only for llm{{/if}}\n',
      'echo/src/agent.ts.hbs': 'export default {{ts name}}\n',
    })
    const paths = renderProject(templates, options(), 'file:./x.tgz').map((file) => file.path)
    expect(paths.sort()).toEqual(['kept.txt', 'src/agent.ts'])
    const withAuth = renderProject(templates, { ...options(), auth: 'bearer' }, 'file:./x.tgz')
    expect(withAuth.find((file) => file.path === '.env')?.content).toMatch(/^TOKEN=[\w-]{16,}\n/)
  })
})

describe('equivalentCommand', () => {
  /** The words /bin/sh makes of the command: `npx` is a shell function that prints its arguments. */
  function shellSplit(command: string): string[] {
    const output = execFileSync('/bin/sh', ['-c', `npx() { printf '%s\\0' "$@"; }\n${command}`], {
      encoding: 'utf8',
      timeout: 5_000,
    })
    const words = output.split('\0')
    expect(words.pop()).toBe('')
    return words
  }

  /** Runs `run` on the command's words with the flag parsing it always uses, and returns the options it resolved. */
  async function resolvedByRun(command: string): Promise<ProjectOptions> {
    expect(command.startsWith('npx create-a2a-agent ')).toBe(true)
    const [bin, ...argv] = shellSplit(command)
    expect(bin).toBe('create-a2a-agent')
    const errors: string[] = []
    const io: CliIo = { cwd, interactive: false, out: () => {}, err: (text) => errors.push(text) }
    capture.on = true
    const code = await run(argv, io)
    expect(errors).toEqual(['captured by the test'])
    expect(code).toBe(99)
    return capture.options!
  }

  const HOSTILE_SKILLS: Skill[] = [
    // The short "id:Name:Description" form fits this one; its description holds colons and shell syntax.
    {
      id: 'simple',
      name: 'Simple $(x)',
      description: `Says: "it's" \`here\` \${y}; then: more`,
      tags: ['simple'],
      examples: [],
    },
    { id: 'full-form', name: 'Name: with colon', description: 'd', tags: ['full-form'], examples: [] },
    {
      id: 'tagged',
      name: 'Tagged "one"',
      description: 'Line 1\nLine 2 </script>',
      tags: HOSTILE.slice(0, 6),
      examples: HOSTILE.slice(6),
    },
    { id: 'no_tags', name: '{{name}}', description: '🤖 café', tags: [], examples: ['$(rm -rf /)', '`id`'] },
  ]

  it('makes a command that run parses back to the same options, for hostile names, descriptions and skills', async () => {
    const options = resolveOptions(
      {
        dir: `agents/Weather "Bot" $(id) it's`,
        name: `  --yes "Weather" 'Bot' $(rm -rf /) \`id\` \${HOME} </script> {{name}}\nsecond line\r\u2028🤖 `,
        description: '-n ; echo pwned && exit 1 | cat # not a comment\\ \\\' \\"',
        skills: HOSTILE_SKILLS,
        template: 'streaming',
        runtime: 'workers',
        auth: 'bearer',
        pm: 'yarn',
        streaming: false,
        install: false,
        git: false,
        force: true,
      },
      cwd,
    )
    expect(await resolvedByRun(equivalentCommand(options))).toEqual(options)
  })

  it('carries every flag value through the shell unchanged', () => {
    const options = resolveOptions(
      {
        dir: 'my agent',
        name: HOSTILE[0],
        description: HOSTILE.slice(1, 14).join(' '),
        skills: HOSTILE_SKILLS,
        auth: 'apikey',
        pm: 'bun',
      },
      cwd,
    )
    const words = shellSplit(equivalentCommand(options))
    const value = (flag: string) => words[words.indexOf(flag) + 1]
    expect(words[1]).toBe('my agent')
    expect(value('--name')).toBe(options.name)
    expect(value('--description')).toBe(options.description)
    expect(words.filter((_, i) => words[i - 1] === '--skill').map(parseSkill)).toEqual(HOSTILE_SKILLS)
    expect(value('--auth')).toBe('apikey')
    expect(value('--pm')).toBe('bun')
    expect(words.at(-1)).toBe('--yes')
  })

  it('round-trips --auth oidc with its issuer and audience, and without them', async () => {
    const given = resolveOptions(
      {
        dir: 'jwt',
        auth: 'oidc',
        oidcIssuer: 'https://login.example.com/',
        oidcAudience: 'api://a,api://b',
        pm: 'npm',
      },
      cwd,
    )
    const placeholders = resolveOptions({ dir: 'jwt', auth: 'oidc', pm: 'npm' }, cwd)
    const words = shellSplit(equivalentCommand(given))
    expect(words[words.indexOf('--oidc-issuer') + 1]).toBe('https://login.example.com/')
    expect(equivalentCommand(placeholders)).not.toContain('--oidc-')
    expect(await resolvedByRun(equivalentCommand(given))).toEqual(given)
    expect(await resolvedByRun(equivalentCommand(placeholders))).toEqual(placeholders)
  })

  it.each(TEMPLATES)('leaves out --skill for the %s template default skill and still round-trips', async (template) => {
    const options = resolveOptions({ dir: 'plain', template, pm: 'npm' }, cwd)
    const command = equivalentCommand(options)
    expect(command).not.toContain('--skill')
    expect(command).toContain(`--template ${template}`)
    expect(await resolvedByRun(command)).toEqual(options)
  })

  it.each(RUNTIMES)('round-trips the %s runtime, naming it only when it is not the default', async (runtime) => {
    const options = resolveOptions({ dir: 'anywhere', runtime, pm: 'npm' }, cwd)
    const words = shellSplit(equivalentCommand(options))
    expect(words.includes('--runtime')).toBe(runtime !== 'node')
    expect(await resolvedByRun(equivalentCommand(options))).toEqual(options)
  })

  it('round-trips the defaults, with install, git and streaming on', async () => {
    const options = resolveOptions({}, cwd)
    const command = equivalentCommand(options)
    expect(command).not.toMatch(/--no-(install|git|streaming)|--force/)
    expect(await resolvedByRun(command)).toEqual(options)
  })

  it('round-trips a directory whose name starts with a dash', async () => {
    const options = resolveOptions({ dir: '-agent', pm: 'npm' }, cwd)
    expect(options.packageName).toBe('agent')
    expect(await resolvedByRun(equivalentCommand(options))).toEqual(options)
  })

  it('round-trips a package name the directory does not make, and leaves --package-name out when it does', async () => {
    const chosen = resolveOptions({ dir: '天气机器人', packageName: 'weather-bot', pm: 'npm' }, cwd)
    const made = resolveOptions({ dir: 'Weather Bot', pm: 'npm' }, cwd)
    expect(shellSplit(equivalentCommand(chosen))).toEqual(expect.arrayContaining(['--package-name', 'weather-bot']))
    expect(await resolvedByRun(equivalentCommand(chosen))).toEqual(chosen)
    expect(equivalentCommand(made)).not.toContain('--package-name')
    expect(await resolvedByRun(equivalentCommand(made))).toEqual(made)
  })

  it('round-trips skills whose name or description --skill JSON gave with padding; a blank description takes the name', async () => {
    const skills = [
      parseSkill('{"id":"padded","name":" Padded ","description":"  spaced out  "}'),
      parseSkill('{"id":"empty","name":"Empty","description":"  "}'),
    ]
    expect(skills.map((skill) => [skill.name, skill.description])).toEqual([
      [' Padded ', '  spaced out  '],
      ['Empty', 'Empty'],
    ])
    const options = resolveOptions({ dir: 'padded', skills, pm: 'npm' }, cwd)
    expect(await resolvedByRun(equivalentCommand(options))).toEqual(options)
  })

  it('resolves relative to the same cwd, so the directory is the same', async () => {
    const options = resolveOptions({ dir: '../sibling dir/agent' }, cwd)
    expect(options.dir).toBe(resolve(cwd, '../sibling dir/agent'))
    expect((await resolvedByRun(equivalentCommand(options))).dir).toBe(options.dir)
  })
})
