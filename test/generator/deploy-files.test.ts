import { readFileSync } from 'node:fs'
import { fileURLToPath } from 'node:url'
import { validate } from 'dockerfile-utils'
import { parse as parseToml } from 'smol-toml'
import { describe, expect, it } from 'vitest'
import { parseAllDocuments } from 'yaml'
import { equivalentCommand } from '../../generator/src/cli.ts'
import { UsageError } from '../../generator/src/errors.ts'
import { type Answers, resolveOptions } from '../../generator/src/options.ts'
import { renderProject } from '../../generator/src/render.ts'

/**
 * The files of each deploy target, rendered in-process and read by the parsers their platforms use (YAML, TOML,
 * JSON, the Dockerfile linter), held to the settings the agent actually has: the port it listens on, the paths
 * that answer probes, the drain the runtime gives running tasks, the byte budgets the heap limit sets.
 */

const templates = fileURLToPath(new URL('../../generator/templates', import.meta.url))
const runtimeReadme = readFileSync(fileURLToPath(new URL('../../runtime/README.md', import.meta.url)), 'utf8')

const MiB = 1024 * 1024

function render(answers: Answers): Map<string, string> {
  const options = resolveOptions({ dir: 'deployed', ...answers }, '/tmp')
  return new Map(renderProject(templates, options, '^0.1.0').map((file) => [file.path, String(file.content)]))
}

const ALL = ['agentcore,cloudrun', 'k8s', 'fly']

/** Every document of a YAML file, failing on any parse error or warning. */
function yamlDocuments(text: string): any[] {
  const documents = parseAllDocuments(text)
  for (const document of documents) expect([...document.errors, ...document.warnings]).toEqual([])
  return documents.map((document) => document.toJS())
}

/** The runtime's drain on SIGTERM by default, as its README's options table says (`shutdownTimeoutMs`). */
function drainSeconds(): number {
  const [, ms] = /^\| `shutdownTimeoutMs` \| `A2A_SHUTDOWN_TIMEOUT_MS`, else (\d+) \|/m.exec(runtimeReadme) ?? []
  expect(ms, 'the runtime README gives shutdownTimeoutMs').toBeDefined()
  return Number(ms) / 1000
}

/** Memory Kubernetes writes as `512Mi`, in bytes. */
function quantity(value: string): number {
  const [, amount, unit] = /^(\d+)(Mi|Gi)$/.exec(value) ?? []
  expect(amount, `${value} is a quantity in Mi or Gi`).toBeDefined()
  return Number(amount) * (unit === 'Gi' ? 1024 : 1) * MiB
}

/**
 * What the agent's memory holds at most, from its environment: the heap V8 may grow to (`--max-old-space-size`)
 * and the Buffers outside it (bodies being received, answers not yet read), at their settings or the runtime's
 * defaults. The container needs room beyond them for Node itself: 128 MiB at least.
 */
function memoryNeed(env: Record<string, string>): number {
  const [, heap] = /--max-old-space-size=(\d+)/.exec(env.NODE_OPTIONS ?? '') ?? []
  expect(heap, 'NODE_OPTIONS sets the heap').toBeDefined()
  const heapBytes = Number(heap) * MiB
  // The byte budgets a quarter of the heap each: the running tasks must still hold one task's 8 MiB.
  expect(heapBytes / 4).toBeGreaterThanOrEqual(8 * MiB)
  const buffers =
    Number(env.A2A_MAX_BODY_BYTES_IN_FLIGHT ?? 64 * MiB) + Number(env.A2A_MAX_PENDING_RESPONSE_BYTES ?? 64 * MiB)
  return heapBytes + buffers + 128 * MiB
}

const envOf = (list: Array<{ name: string; value?: string }>) =>
  Object.fromEntries(list.filter((entry) => entry.value !== undefined).map((entry) => [entry.name, entry.value!]))

describe('--deploy, its answers', () => {
  it('gives a Node project the Dockerfile alone by default, and nothing with none', () => {
    expect(resolveOptions({}, '/tmp').deploy).toEqual(['docker'])
    const plain = render({})
    expect(plain.has('Dockerfile')).toBe(true)
    expect(plain.has('.dockerignore')).toBe(true)
    for (const path of ['agentcore/runtime.json', 'service.yaml', 'k8s/deployment.yaml', 'fly.toml'])
      expect(plain.has(path), path).toBe(false)
    const none = render({ deploy: ['none'] })
    expect(none.has('Dockerfile')).toBe(false)
    expect(none.has('.dockerignore')).toBe(false)
    // Nothing in the README builds an image that is not there.
    expect(none.get('README.md')).not.toMatch(/docker build|build: \./)
    expect(none.get('README.md')).toMatch(/^npm install && HOST=0\.0\.0\.0 PORT=3000 npm run start$/m)
  })

  it('takes targets repeated or comma-separated, in any case, and brings the Dockerfile with every platform', () => {
    const options = resolveOptions({ deploy: ['K8s, fly', 'fly', 'agentcore'] }, '/tmp')
    expect(options.deploy).toEqual(['docker', 'agentcore', 'k8s', 'fly'])
    expect(equivalentCommand(options)).toContain(' --deploy docker,agentcore,k8s,fly ')
    expect(equivalentCommand(resolveOptions({ deploy: ['none'] }, '/tmp'))).toContain(' --deploy none ')
    expect(equivalentCommand(resolveOptions({}, '/tmp'))).not.toContain('--deploy')
    expect(equivalentCommand(resolveOptions({ runtime: 'workers' }, '/tmp'))).not.toContain('--deploy')
  })

  it.each([
    [{ deploy: ['heroku'] }, '--deploy must be one of docker, agentcore, cloudrun, k8s, fly or none (got "heroku")'],
    [{ deploy: ['k8s,'] }, '--deploy must not have an empty entry (got "k8s,")'],
    [{ deploy: ['none', 'k8s'] }, '--deploy none cannot go with a target (got none,k8s)'],
    [
      { deploy: ['k8s'], runtime: 'workers' },
      /^--deploy k8s is a container target, and --runtime workers deploys with wrangler/,
    ],
    [
      { deploy: ['docker'], runtime: 'bun' },
      /^--deploy docker runs the project's container image, .*\(got --runtime bun\)/,
    ],
    [{ deploy: ['fly'], runtime: 'deno' }, /^--deploy fly .*\(got --runtime deno\)/],
  ] as Array<[Answers, string | RegExp]>)('refuses %j in one line naming the flag', (answers, message) => {
    let error: unknown
    try {
      resolveOptions(answers, '/tmp')
    } catch (caught) {
      error = caught
    }
    expect(error).toBeInstanceOf(UsageError)
    const text = (error as Error).message
    expect(text).not.toContain('\n')
    if (typeof message === 'string') expect(text).toBe(message)
    else expect(text).toMatch(message)
  })

  it('gives the other runtimes no target unless asked, and takes none there', () => {
    for (const runtime of ['bun', 'deno', 'workers']) {
      expect(resolveOptions({ runtime }, '/tmp').deploy).toEqual([])
      expect(resolveOptions({ runtime, deploy: ['none'] }, '/tmp').deploy).toEqual([])
    }
  })
})

describe('every target at once', () => {
  const files = render({ deploy: ALL, auth: 'bearer' })

  it('writes each target its files, and the Dockerfile still lints clean', () => {
    for (const path of [
      'Dockerfile',
      'agentcore/runtime.json',
      'service.yaml',
      'k8s/deployment.yaml',
      'k8s/service.yaml',
      'fly.toml',
    ])
      expect(files.has(path), path).toBe(true)
    expect(validate(files.get('Dockerfile')!)).toEqual([])
  })

  it("Kubernetes: probes on /healthz and /readyz at the agent's port, a grace above the drain, memory for heap and buffers", () => {
    const [deployment] = yamlDocuments(files.get('k8s/deployment.yaml')!)
    const [service] = yamlDocuments(files.get('k8s/service.yaml')!)
    expect(deployment).toMatchObject({ apiVersion: 'apps/v1', kind: 'Deployment' })
    expect(service).toMatchObject({ apiVersion: 'v1', kind: 'Service' })
    const pod = deployment.spec.template
    expect(deployment.spec.selector.matchLabels).toEqual(pod.metadata.labels)
    expect(service.spec.selector).toEqual(pod.metadata.labels)
    const [container] = pod.spec.containers
    const env = envOf(container.env)
    expect(env.HOST).toBe('0.0.0.0')
    const port = container.ports.find((entry: { name: string }) => entry.name === 'http')
    expect(port.containerPort).toBe(Number(env.PORT))
    expect(service.spec.ports[0].targetPort).toBe('http')
    expect(container.livenessProbe.httpGet).toEqual({ path: '/healthz', port: 'http' })
    expect(container.readinessProbe.httpGet).toEqual({ path: '/readyz', port: 'http' })
    expect(container.startupProbe.httpGet.port).toBe('http')
    // SIGTERM held back a few seconds while the Service still routes to the stopping pod (the server stops
    // listening at SIGTERM when no task runs); the grace counts from the hook, so it holds the hook and the drain.
    const preStop = container.lifecycle.preStop.sleep.seconds
    expect(preStop).toBeGreaterThanOrEqual(3)
    expect(pod.spec.terminationGracePeriodSeconds).toBeGreaterThan(preStop + drainSeconds())
    expect(env.A2A_SHUTDOWN_TIMEOUT_MS).toBeUndefined()
    const limit = quantity(container.resources.limits.memory)
    expect(limit).toBeGreaterThanOrEqual(memoryNeed(env))
    expect(quantity(container.resources.requests.memory)).toBe(limit)
    // The image's `node` user.
    expect(pod.spec.securityContext).toMatchObject({ runAsNonRoot: true, runAsUser: 1000 })
    // The credential of .env, as a Secret the README says how to make.
    const secret = container.envFrom[0].secretRef.name
    expect(files.get('README.md')).toContain(`kubectl create secret generic ${secret} --from-env-file=.env`)
  })

  it('Cloud Run: its port given as PORT, no PORT of its own (Cloud Run refuses it), probes, memory, streams', () => {
    const [service] = yamlDocuments(files.get('service.yaml')!)
    expect(service).toMatchObject({ apiVersion: 'serving.knative.dev/v1', kind: 'Service' })
    const [container] = service.spec.template.spec.containers
    const env = envOf(container.env)
    expect(env.PORT).toBeUndefined()
    // Cloud Run kills 10 s after SIGTERM: the drain ends with time left to fail the tasks still running.
    expect(Number(env.A2A_SHUTDOWN_TIMEOUT_MS)).toBeLessThanOrEqual(8000)
    expect(Number(env.A2A_SHUTDOWN_TIMEOUT_MS)).toBeGreaterThan(0)
    expect(container.ports).toEqual([{ name: 'http1', containerPort: 8080 }])
    expect(container.startupProbe.httpGet.path).toBe('/readyz')
    expect(container.livenessProbe.httpGet.path).toBe('/healthz')
    expect(quantity(container.resources.limits.memory)).toBeGreaterThanOrEqual(memoryNeed(env))
    expect(service.spec.template.spec.timeoutSeconds).toBe(3600)
    // Tasks in memory: one instance, else a task may be asked of the instance that does not hold it.
    expect(service.spec.template.metadata.annotations['autoscaling.knative.dev/maxScale']).toBe('1')
    const readme = files.get('README.md')!
    const command = /^gcloud run deploy (?:[^\n]*\\\n)*[^\n]*/m.exec(readme)![0]
    expect(command).toContain(`--port ${container.ports[0].containerPort}`)
    expect(command).toContain(`--memory ${container.resources.limits.memory}`)
    expect(command).toContain(`NODE_OPTIONS=${env.NODE_OPTIONS}`)
    expect(command).toContain(`A2A_SHUTDOWN_TIMEOUT_MS=${env.A2A_SHUTDOWN_TIMEOUT_MS}`)
  })

  it("Fly.io: the agent's port as internal port, checks on /healthz, a kill timeout above the drain, memory", () => {
    const fly = parseToml(files.get('fly.toml')!) as any
    expect(fly.app).toMatch(/^[a-z][a-z0-9-]*$/)
    expect(fly.http_service.internal_port).toBe(Number(fly.env.PORT))
    expect(fly.http_service.checks.map((check: { path: string }) => check.path)).toEqual(['/healthz'])
    expect(fly.kill_signal).toBe('SIGTERM')
    const [, seconds] = /^(\d+)s$/.exec(fly.kill_timeout) ?? []
    expect(Number(seconds)).toBeGreaterThan(drainSeconds())
    const [, mb] = /^(\d+)mb$/.exec(fly.vm[0].memory) ?? []
    expect(Number(mb) * MiB).toBeGreaterThanOrEqual(memoryNeed(fly.env))
    expect(files.get('README.md')).toContain('fly secrets import < .env')
  })

  it("AgentCore: the A2A server protocol on 0.0.0.0:9000, for the AWS CLI's --cli-input-json", () => {
    const runtime = JSON.parse(files.get('agentcore/runtime.json')!)
    expect(runtime).toMatchObject({
      agentRuntimeName: 'deployed',
      protocolConfiguration: { serverProtocol: 'A2A' },
      environmentVariables: { PORT: '9000', HOST: '0.0.0.0' },
    })
    const readme = files.get('README.md')!
    expect(readme).toContain('--platform linux/arm64')
    expect(readme).toContain('create-agent-runtime --cli-input-json file://agentcore/runtime.json')
  })

  it('says how to deploy to each in a README section of its own', () => {
    const readme = files.get('README.md')!
    for (const heading of ['### AWS Bedrock AgentCore', '### Google Cloud Run', '### Kubernetes', '### Fly.io'])
      expect(readme).toContain(heading)
    expect(readme).toContain('kubectl apply -f k8s/')
    expect(readme).toContain('fly deploy')
  })
})

describe('names the platforms take', () => {
  it.each(['@acme/9-lives.bot', 'a--b', 'x'.repeat(80)])(
    'makes valid ones of the package name %s, and a description of any text valid JSON',
    (packageName) => {
      const description = 'Says "hi" \\ and\nmore </script>'
      const files = render({ deploy: ALL, packageName, description })
      const name = (yamlDocuments(files.get('k8s/deployment.yaml')!)[0] as any).metadata.name
      // DNS-1123 labels, Cloud Run's 49 and a leading letter.
      expect(name).toMatch(/^[a-z]([a-z0-9-]{0,47}[a-z0-9])?$/)
      expect((yamlDocuments(files.get('service.yaml')!)[0] as any).metadata.name).toBe(name)
      expect((parseToml(files.get('fly.toml')!) as any).app).toBe(name)
      const runtime = JSON.parse(files.get('agentcore/runtime.json')!)
      expect(runtime.agentRuntimeName).toMatch(/^[a-zA-Z][a-zA-Z0-9_]{0,47}$/)
      expect(runtime.description).toBe(description)
    },
  )
})
