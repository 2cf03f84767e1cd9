"""The model endpoint: the ChatOpenAI client, structured output, tokens, limits, retries, the head start.

May import services.base, services.workers and below (config, prompts, state, runscope, ...).
"""
