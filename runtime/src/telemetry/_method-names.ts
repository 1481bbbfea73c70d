/**
 * The A2A v1.0 name of each method of the slash-named dialects (the platform's and A2A v0.3), which the A2A semantic
 * conventions name every operation by (`a2a.method.name`, the span's name). A v1.0 name stands for itself.
 */
const V1_NAMES: ReadonlyMap<string, string> = new Map([
  ['message/send', 'SendMessage'],
  ['message/stream', 'SendStreamingMessage'],
  ['tasks/get', 'GetTask'],
  ['tasks/cancel', 'CancelTask'],
  ['tasks/resubscribe', 'SubscribeToTask'],
  ['tasks/pushNotificationConfig/set', 'CreateTaskPushNotificationConfig'],
  ['tasks/pushNotificationConfig/get', 'GetTaskPushNotificationConfig'],
  ['tasks/pushNotificationConfig/list', 'ListTaskPushNotificationConfigs'],
  ['tasks/pushNotificationConfig/delete', 'DeleteTaskPushNotificationConfig'],
  ['agent/getAuthenticatedExtendedCard', 'GetExtendedAgentCard'],
])

export const v1MethodName = (method: string): string => V1_NAMES.get(method) ?? method
