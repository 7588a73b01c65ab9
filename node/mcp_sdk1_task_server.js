// @modelcontextprotocol/sdk 1.32.2 serving tasks as 2025-11-25 defines them
// (the experimental core tasks: a `task` param on tools/call, tasks/get,
// tasks/result, tasks/cancel) over stdio, for spec/mcp_client_tasks_spec.lua:
// jrpc.mcp.client's task calls against a server we did not write. Tools:
//   delay {ms}: a task (required) that completes after ms with "Completed Nms";
//   broken: a task (required) that fails.
// From the repository root: node node/mcp_sdk1_task_server.js
const { McpServer } = require('@modelcontextprotocol/sdk/server/mcp.js');
const { StdioServerTransport } = require('@modelcontextprotocol/sdk/server/stdio.js');
const { InMemoryTaskStore, InMemoryTaskMessageQueue } = require('@modelcontextprotocol/sdk/experimental/tasks/stores/in-memory.js');
const z = require('zod');

const taskStore = new InMemoryTaskStore();
const server = new McpServer({ name: 'sdk1-task-server', version: '1.0.0' }, {
  capabilities: { tasks: { requests: { tools: { call: {} } }, cancel: {}, list: {} } },
  taskStore,
  taskMessageQueue: new InMemoryTaskMessageQueue(),
});

function taskTool(name, description, inputSchema, work) {
  server.experimental.tasks.registerToolTask(name, { description, inputSchema,
    execution: { taskSupport: 'required' } }, {
    async createTask(args, { taskStore: store, taskRequestedTtl }) {
      const task = await store.createTask({ ttl: taskRequestedTtl, pollInterval: 50 });
      work(args).then(
        (result) => store.storeTaskResult(task.taskId, 'completed', result),
        (err) => store.storeTaskResult(task.taskId, 'failed', {
          content: [{ type: 'text', text: String(err.message) }], isError: true }))
        .catch(() => {});  // a cancelled task takes no result
      return { task };
    },
    async getTask(_args, { taskId, taskStore: store }) { return store.getTask(taskId); },
    async getTaskResult(_args, { taskId, taskStore: store }) { return store.getTaskResult(taskId); },
  });
}

taskTool('delay', 'Completes after ms milliseconds', { ms: z.number() }, async ({ ms }) => {
  await new Promise((resolve) => setTimeout(resolve, ms));
  return { content: [{ type: 'text', text: `Completed ${ms}ms` }] };
});
taskTool('broken', 'Fails', {}, async () => { throw new Error('the job broke'); });

server.connect(new StdioServerTransport());
