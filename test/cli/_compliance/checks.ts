import { advancedChecks } from './advanced.ts'
import { authChecks } from './auth.ts'
import { cardChecks } from './card.ts'
import { configChecks } from './config.ts'
import type { Check } from './context.ts'
import { defaultChecks } from './defaults.ts'
import { exitChecks } from './exit.ts'
import { interactChecks } from './interact.ts'
import { outChecks } from './out.ts'
import { pollChecks } from './poll.ts'
import { sendChecks } from './send.ts'
import { skillChecks } from './skill.ts'
import { surfaceChecks } from './surface.ts'
import { taskChecks } from './task.ts'
import { txChecks } from './tx.ts'

/** Every check, one per requirement of the registry. */
export const ALL_CHECKS: Check[] = [
  ...cardChecks,
  ...sendChecks,
  ...taskChecks,
  ...interactChecks,
  ...pollChecks,
  ...outChecks,
  ...exitChecks,
  ...authChecks,
  ...txChecks,
  ...defaultChecks,
  ...configChecks,
  ...surfaceChecks,
  ...skillChecks,
  ...advancedChecks,
]
